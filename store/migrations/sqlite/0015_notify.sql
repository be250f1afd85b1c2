-- Alert deliveries (issue 19): one row per event and channel, pending
-- until delivered or given up. The row is the retry queue (a restarted
-- hub picks up the pending ones) and the delivery log. event is the JSON
-- of the event as it fired, so a retry sends what the first attempt sent;
-- it holds no secret and no remote response body.
CREATE TABLE alert_deliveries (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id   BIGINT  NOT NULL,
    channel    TEXT    NOT NULL,
    route      TEXT    NOT NULL DEFAULT '',
    status     TEXT    NOT NULL DEFAULT 'pending', -- pending, delivered, failed
    attempts   INTEGER NOT NULL DEFAULT 0,
    created_ts BIGINT  NOT NULL,
    next_ts    BIGINT  NOT NULL,
    updated_ts BIGINT  NOT NULL,
    error      TEXT    NOT NULL DEFAULT '',
    event      TEXT    NOT NULL
);
CREATE INDEX alert_deliveries_due ON alert_deliveries (status, channel, next_ts);
CREATE INDEX alert_deliveries_log ON alert_deliveries (id DESC);
