-- 0002_reservations.sql - advance reservations (user and maintenance).
-- SPDX-License-Identifier: MIT

-- One row per reservation; doc is the reservation as the API shows it.
CREATE TABLE reservations (
    id          bigint PRIMARY KEY,
    state       text NOT NULL,
    doc         json NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX reservations_open ON reservations (id)
    WHERE state IN ('planned', 'active');
