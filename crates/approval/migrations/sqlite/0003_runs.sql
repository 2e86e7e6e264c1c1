-- Durable runs: one row per run a server started, and the run's trace as its journal.
-- A restarted server finds the runs that were `running` or `waiting` and rebuilds each from
-- its lines. Times are milliseconds since the Unix epoch (UTC); JSON is stored as text.

CREATE TABLE run (
    id               TEXT PRIMARY KEY,
    agent            TEXT NOT NULL,
    request          TEXT NOT NULL,
    status           TEXT NOT NULL
        CHECK (status IN ('running', 'waiting', 'completed', 'failed', 'cancelled',
                          'turn_limit', 'timed_out')),
    pending_approval TEXT,
    turns            BIGINT,
    error            TEXT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    ended_at         BIGINT
);

CREATE INDEX run_status ON run (status, created_at);

CREATE TABLE run_line (
    run_id TEXT NOT NULL REFERENCES run (id),
    seq    BIGINT NOT NULL,
    kind   TEXT NOT NULL,
    line   TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- The journal is append-only: a line, once written, is what happened.
CREATE TRIGGER run_line_no_update BEFORE UPDATE ON run_line
BEGIN
    SELECT RAISE(ABORT, 'run_line is append-only');
END;

CREATE TRIGGER run_line_no_delete BEFORE DELETE ON run_line
BEGIN
    SELECT RAISE(ABORT, 'run_line is append-only');
END;

-- An ended run stays ended.
CREATE TRIGGER run_terminal BEFORE UPDATE OF status ON run
WHEN OLD.status NOT IN ('running', 'waiting') AND NEW.status <> OLD.status
BEGIN
    SELECT RAISE(ABORT, 'an ended run cannot change its status');
END;

CREATE TRIGGER run_no_delete BEFORE DELETE ON run
BEGIN
    SELECT RAISE(ABORT, 'runs are never deleted');
END;
