-- 0005_leader.sql - the active loomd's heartbeat, and the write fence.
-- SPDX-License-Identifier: MIT
--
-- Several loomd may share one database; one of them is active
-- (docs/internals/standby.md). It holds a session advisory lock, and this
-- one row says who it is, where it answers, the epoch it acts under and
-- when it last renewed its lease. Only the holder of the lock writes the
-- row; a standby that takes over raises the epoch.
CREATE TABLE leader (
    id          integer PRIMARY KEY CHECK (id = 1),
    epoch       bigint NOT NULL,            -- 0: no loomd was ever active
    identity    text NOT NULL,              -- host:pid:nonce of the holder
    url         text NOT NULL,              -- where it answers, or ''
    lease_ms    integer NOT NULL,           -- its lease, as it counts it
    seq         bigint NOT NULL,            -- renewals in this epoch
    released    boolean NOT NULL,           -- it stopped and let go
    since       timestamptz NOT NULL,       -- the epoch began
    renewed_at  timestamptz NOT NULL        -- the last renewal
);
INSERT INTO leader VALUES (1, 0, '', '', 0, 0, true, now(), now());

-- The write fence: every statement that changes a table of Loom's state
-- runs this first, in its own transaction. A loomd's connections carry the
-- epoch it acts under (the setting loom.epoch, given when it connects); a
-- write under any other epoch than the current one is refused, so a loomd
-- that lost its place can commit nothing, even one that was stopped in the
-- middle of a transaction. The shared transaction lock waits for a takeover
-- that is raising the epoch (it holds the lock exclusively); a takeover
-- waits for the writes in flight. A session without loom.epoch is not a
-- loomd (psql, the migrations) and is let through.
CREATE FUNCTION loom_fence() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    mine text := current_setting('loom.epoch', true);
    cur bigint;
BEGIN -- the fence
    IF mine IS NULL OR mine = '' THEN
        RETURN NULL;
    END IF;
    -- Under a snapshot older than the lock, the epoch read below could be
    -- one that has moved on since.
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'loom fence: a write of loomd must run at READ '
            'COMMITTED, not %', current_setting('transaction_isolation')
            USING ERRCODE = 'LF001';
    END IF;
    PERFORM pg_advisory_xact_lock_shared(1280266061, 3);
    SELECT epoch INTO cur FROM leader WHERE id = 1;
    IF cur IS DISTINCT FROM mine::bigint THEN
        RAISE EXCEPTION 'this loomd acts under epoch %, but the active '
            'loomd''s epoch is %', mine, cur USING ERRCODE = 'LF001';
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER jobs_fence BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON jobs FOR EACH STATEMENT EXECUTE FUNCTION loom_fence();
CREATE TRIGGER events_fence BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON events FOR EACH STATEMENT EXECUTE FUNCTION loom_fence();
CREATE TRIGGER reservations_fence BEFORE INSERT OR UPDATE OR DELETE OR
    TRUNCATE ON reservations FOR EACH STATEMENT EXECUTE FUNCTION loom_fence();
CREATE TRIGGER goal_nodes_fence BEFORE INSERT OR UPDATE OR DELETE OR
    TRUNCATE ON goal_nodes FOR EACH STATEMENT EXECUTE FUNCTION loom_fence();
CREATE TRIGGER actual_reports_fence BEFORE INSERT OR UPDATE OR DELETE OR
    TRUNCATE ON actual_reports FOR EACH STATEMENT
    EXECUTE FUNCTION loom_fence();
CREATE TRIGGER mismatches_fence BEFORE INSERT OR UPDATE OR DELETE OR
    TRUNCATE ON mismatches FOR EACH STATEMENT EXECUTE FUNCTION loom_fence();
CREATE TRIGGER maintenance_fence BEFORE INSERT OR UPDATE OR DELETE OR
    TRUNCATE ON maintenance FOR EACH STATEMENT EXECUTE FUNCTION loom_fence();
