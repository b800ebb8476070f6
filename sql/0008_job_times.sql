-- 0008_job_times.sql - a job's start and end times as columns of their
-- own, written with its doc, for the indexes of its history.
-- SPDX-License-Identifier: MIT
--
-- 0006 indexed the times inside doc: every write of a job, three or more
-- for each one (submitted, started, ended), parsed the whole json text
-- again for each index expression and predicate, which was a fifth of
-- PostgreSQL's work per submit. loomd now writes the two times beside the
-- doc (RFC 3339 UTC text of the one form doc has, which sorts as the
-- times do); GET /v1/accounting, /v1/usage and fair share's past usage
-- read the columns. The rows written before this migration get theirs
-- here, once.
ALTER TABLE jobs ADD COLUMN start_time text, ADD COLUMN end_time text;
UPDATE jobs SET start_time = doc->>'start_time', end_time = doc->>'end_time'
    WHERE doc->>'start_time' IS NOT NULL OR doc->>'end_time' IS NOT NULL;
DROP INDEX jobs_end_time;
DROP INDEX jobs_running_start;
CREATE INDEX jobs_end_time ON jobs (end_time) WHERE end_time IS NOT NULL;
CREATE INDEX jobs_running_start ON jobs (start_time)
    WHERE end_time IS NULL AND start_time IS NOT NULL;
