-- The confirmation store: one row per call that waits for a human, and an append-only audit.
-- Times are milliseconds since the Unix epoch (UTC), as BIGINT, so the same columns fit
-- PostgreSQL. JSON values are stored as text.

CREATE TABLE confirmation_request (
    id                 TEXT PRIMARY KEY,
    idempotency_key    TEXT NOT NULL UNIQUE,
    run_id             TEXT NOT NULL,
    session_id         TEXT NOT NULL,
    agent              TEXT NOT NULL,
    tool_name          TEXT NOT NULL,
    tool_call_id       TEXT NOT NULL,
    arguments          TEXT NOT NULL,
    args_hash          TEXT NOT NULL,
    reasons            TEXT NOT NULL,
    asked_by           TEXT NOT NULL,
    approvers          TEXT NOT NULL,
    status             TEXT NOT NULL
        CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'cancelled')),
    channel            TEXT,
    channel_message_id TEXT,
    created_at         BIGINT NOT NULL,
    expires_at         BIGINT NOT NULL,
    responded_at       BIGINT,
    responded_by       TEXT,
    response_note      TEXT,
    edited_arguments   TEXT,
    edited_args_hash   TEXT,
    consumed_at        BIGINT,
    finished_at        BIGINT,
    CHECK (consumed_at IS NULL OR status = 'approved')
);

CREATE INDEX confirmation_request_status ON confirmation_request (status, expires_at);
CREATE INDEX confirmation_request_run ON confirmation_request (run_id);

CREATE TABLE confirmation_event (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id  TEXT NOT NULL REFERENCES confirmation_request (id),
    at          BIGINT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('applied', 'refused')),
    from_status TEXT NOT NULL,
    to_status   TEXT NOT NULL,
    channel     TEXT,
    detail      TEXT
);

CREATE INDEX confirmation_event_request ON confirmation_event (request_id, id);

-- The audit is append-only: no row is ever changed or removed.
CREATE TRIGGER confirmation_event_no_update BEFORE UPDATE ON confirmation_event
BEGIN
    SELECT RAISE(ABORT, 'confirmation_event is append-only');
END;

CREATE TRIGGER confirmation_event_no_delete BEFORE DELETE ON confirmation_event
BEGIN
    SELECT RAISE(ABORT, 'confirmation_event is append-only');
END;

-- A decided request keeps its decision: a terminal status never changes.
CREATE TRIGGER confirmation_request_terminal BEFORE UPDATE OF status ON confirmation_request
WHEN OLD.status <> 'pending' AND NEW.status <> OLD.status
BEGIN
    SELECT RAISE(ABORT, 'a decided confirmation request cannot change its status');
END;

-- Requests are evidence: they are never removed.
CREATE TRIGGER confirmation_request_no_delete BEFORE DELETE ON confirmation_request
BEGIN
    SELECT RAISE(ABORT, 'confirmation requests are never deleted');
END;
