-- 0007_node_pauses.sql - paused nodes: a node taken back by its owner (a
-- desk machine), its running jobs suspended and nothing placed on it
-- until it is resumed. doc: {"reason", "by", "since" (epoch s), "jobs":
-- [the ids of the jobs the pause suspended, which its resume resumes]}.
-- SPDX-License-Identifier: MIT

CREATE TABLE node_pauses (
    node        text PRIMARY KEY,           -- "cluster/name"
    doc         json NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TRIGGER node_pauses_fence BEFORE INSERT OR UPDATE OR DELETE OR
    TRUNCATE ON node_pauses FOR EACH STATEMENT EXECUTE FUNCTION loom_fence();
