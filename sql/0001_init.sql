-- 0001_init.sql - fabric jobs and the append-only event log.
-- SPDX-License-Identifier: MIT
--
-- Applied by store_migrate() inside one transaction together with its
-- schema_version row; the runner creates schema_version itself. A migration
-- never contains BEGIN or COMMIT.

-- One row per fabric job. doc is the job as the API shows it plus internal
-- fields; state and owner are copied out of it for indexes and filters.
CREATE TABLE jobs (
    id          bigint PRIMARY KEY,
    state       text NOT NULL,
    owner       text NOT NULL,
    idem_owner  text,
    idem_key    text,
    idem_hash   text,
    doc         json NOT NULL,   -- kept as written: start-up reads it back as is
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- An idempotency key is unique per owner: a replay finds the first job.
CREATE UNIQUE INDEX jobs_idem_key ON jobs (idem_owner, idem_key)
    WHERE idem_key IS NOT NULL;

-- What start-up needs first: the jobs that are not finished.
CREATE INDEX jobs_active ON jobs (id)
    WHERE state NOT IN ('completed', 'failed', 'cancelled');

-- The event and audit log: rows are only ever appended.
CREATE TABLE events (
    id       bigserial PRIMARY KEY,
    time     timestamptz NOT NULL DEFAULT now(),
    level    text,
    kind     text NOT NULL,
    subject  text,
    message  text NOT NULL
);

CREATE INDEX events_time ON events (time);
