-- Incidents (spec 3, 4.10, 6.4; issue 18): the correlation engine groups
-- an agent's alert events by five deterministic rules; correlation_key is
-- r<rule>|agent<id>. At most one incident per key is open (states open,
-- ack, investigating): the partial unique index holds it even when two
-- hubs correlate the same database. A repeat raises severity only and
-- keeps the highest risk.
CREATE TABLE incidents (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    correlation_key TEXT    NOT NULL,
    rule            INTEGER NOT NULL,
    agent_id        BIGINT  NOT NULL DEFAULT 0,
    site            TEXT    NOT NULL DEFAULT '',
    state           TEXT    NOT NULL DEFAULT 'open', -- open, ack, investigating, resolved, closed
    severity        INTEGER NOT NULL,
    risk            INTEGER NOT NULL,
    title           TEXT    NOT NULL,
    opened_ts       BIGINT  NOT NULL,
    updated_ts      BIGINT  NOT NULL,
    closed_ts       BIGINT  NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX incidents_one_open ON incidents (correlation_key) WHERE state IN ('open', 'ack', 'investigating');
CREATE INDEX incidents_opened ON incidents (opened_ts DESC, id DESC);

-- The member events of an incident.
CREATE TABLE incident_events (
    incident_id BIGINT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    event_id    BIGINT NOT NULL REFERENCES alert_events (id) ON DELETE CASCADE,
    PRIMARY KEY (incident_id, event_id)
);
CREATE INDEX incident_events_event ON incident_events (event_id);
