-- Approval channels (Feishu/Lark cards, Slack messages): what was sent where, and which
-- callback deliveries were seen. Times are milliseconds since the Unix epoch, as BIGINT.

-- One row per request and channel it is sent to. The row is written before the send, with
-- the nonce the buttons carry; `message_id` is set once the platform accepted the message,
-- so a restarted server sends only what has no message id yet (and Feishu de-duplicates a
-- re-send by the request id). `closed_status` is the terminal status the message shows once
-- a click reply or an update replaced it.
CREATE TABLE channel_message (
    request_id    TEXT NOT NULL REFERENCES confirmation_request (id),
    channel       TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    message_id    TEXT,
    attempts      INTEGER NOT NULL DEFAULT 0,
    next_try_at   BIGINT NOT NULL,
    last_error    TEXT,
    created_at    BIGINT NOT NULL,
    sent_at       BIGINT,
    closed_status TEXT,
    closed_at     BIGINT,
    PRIMARY KEY (request_id, channel)
);

CREATE INDEX channel_message_unsent ON channel_message (channel, next_try_at)
    WHERE message_id IS NULL;
CREATE INDEX channel_message_open ON channel_message (channel)
    WHERE message_id IS NOT NULL AND closed_status IS NULL;

-- Callback deliveries seen, by the platform's event id: a retried delivery is recognised.
CREATE TABLE channel_event (
    channel     TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    request_id  TEXT,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (channel, event_id)
);
