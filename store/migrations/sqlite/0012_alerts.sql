-- Alert events (spec 2.6, 3), their notes and silences. An event is one
-- row however often its condition repeats while open: count and last_ts
-- grow, no row is added (the engine keeps the cooldown per kind|key).
CREATE TABLE alert_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    ts          BIGINT  NOT NULL,
    kind        TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    message     TEXT    NOT NULL DEFAULT '',
    severity    INTEGER NOT NULL DEFAULT 0,
    state       TEXT    NOT NULL DEFAULT 'firing', -- firing, ack, resolved
    site        TEXT    NOT NULL DEFAULT '',
    count       BIGINT  NOT NULL DEFAULT 1,
    group_id    BIGINT  NOT NULL DEFAULT 0,
    ext_ref     TEXT    NOT NULL DEFAULT '',
    agent_id    BIGINT  NOT NULL DEFAULT 0,
    last_ts     BIGINT  NOT NULL,
    resolved_ts BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX alert_events_ts ON alert_events (ts DESC, id DESC);
CREATE INDEX alert_events_open ON alert_events (state, kind, key);

CREATE TABLE alert_notes (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id BIGINT NOT NULL REFERENCES alert_events (id) ON DELETE CASCADE,
    ts       BIGINT NOT NULL,
    author   TEXT   NOT NULL DEFAULT '',
    text     TEXT   NOT NULL
);
CREATE INDEX alert_notes_event ON alert_notes (event_id);

CREATE TABLE alert_silences (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT   NOT NULL DEFAULT '',
    site       TEXT   NOT NULL DEFAULT '',
    key        TEXT   NOT NULL DEFAULT '',
    start_ts   BIGINT NOT NULL,
    end_ts     BIGINT NOT NULL,
    comment    TEXT   NOT NULL DEFAULT '',
    created_by TEXT   NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
