-- 0006_accounting.sql - the jobs' history read by time: GET /v1/accounting
-- and GET /v1/usage, and fair share's past usage.
-- SPDX-License-Identifier: MIT
--
-- A job's times are kept in its doc as RFC 3339 UTC text of one fixed
-- form (2026-11-26T10:00:00Z), which sorts as the times do: the window of
-- a query compares that text, and these indexes on it cover every row,
-- those written before this migration too.
CREATE INDEX jobs_end_time ON jobs ((doc->>'end_time'))
    WHERE doc->>'end_time' IS NOT NULL;
-- Jobs that run on, with no end yet, by their start.
CREATE INDEX jobs_running_start ON jobs ((doc->>'start_time'))
    WHERE doc->>'end_time' IS NULL AND doc->>'start_time' IS NOT NULL;
