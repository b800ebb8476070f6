-- 0003_maintenance.sql - goal state, actual state, mismatches and
-- maintenance requests (the maintenance thread's own tables).
-- SPDX-License-Identifier: MIT

-- What each node should be: one row per node ("cluster/name"), its
-- attributes as a JSON object.
CREATE TABLE goal_nodes (
    node        text PRIMARY KEY,
    attrs       json NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The last monitoring report of each attribute of a node, with its time.
CREATE TABLE actual_reports (
    node        text NOT NULL,
    attribute   text NOT NULL,
    value       json NOT NULL,
    time        timestamptz NOT NULL,
    PRIMARY KEY (node, attribute)
);

-- The mismatches as last compared; since survives restarts.
CREATE TABLE mismatches (
    node        text NOT NULL,
    attribute   text NOT NULL,
    goal        json,
    actual      json,
    since       timestamptz NOT NULL,
    PRIMARY KEY (node, attribute)
);

-- One row per maintenance request; doc is the request as the API shows it.
CREATE TABLE maintenance (
    id          bigint PRIMARY KEY,
    state       text NOT NULL,
    doc         json NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX maintenance_open ON maintenance (id)
    WHERE state NOT IN ('done', 'failed', 'cancelled');
