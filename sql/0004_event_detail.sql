-- 0004_event_detail.sql - events carry a detail: the fields of an audit
-- record (a grid submit, cancel or denial: identity, VO, account, reason).
-- SPDX-License-Identifier: MIT

ALTER TABLE events ADD COLUMN detail json;

-- Audits are read by kind over a time range.
CREATE INDEX events_kind_time ON events (kind, time);
