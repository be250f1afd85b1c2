-- Flow collection (spec 2.11, 4.8, 4.10). Flows are stored as per-minute
-- aggregates keyed by exporter and 5-tuple: every query needs no finer
-- time, and storage then grows with the number of distinct conversations,
-- not with the flow rate. ts is the minute's start (Unix seconds).
CREATE TABLE flow_minutes (
    ts        BIGINT  NOT NULL,
    exporter  TEXT    NOT NULL,
    src       TEXT    NOT NULL,
    dst       TEXT    NOT NULL,
    src_port  INTEGER NOT NULL,
    dst_port  INTEGER NOT NULL,
    proto     INTEGER NOT NULL,
    packets   BIGINT  NOT NULL,
    octets    BIGINT  NOT NULL,
    flows     BIGINT  NOT NULL, -- flow records summed into the row
    last_seen BIGINT  NOT NULL, -- latest record time in the minute
    PRIMARY KEY (ts, exporter, src, dst, src_port, dst_port, proto)
);
CREATE INDEX flow_minutes_pair ON flow_minutes (src, dst, ts);

-- v9/IPFIX templates, so data decodes at once after a restart.
CREATE TABLE flow_templates (
    exporter   TEXT    NOT NULL,
    domain     BIGINT  NOT NULL,
    id         INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    body       TEXT    NOT NULL, -- JSON of the template's fields
    updated_at BIGINT  NOT NULL,
    PRIMARY KEY (exporter, domain, id)
);

-- Syslog messages received (spec 2.11).
CREATE TABLE syslog_events (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    ts       BIGINT  NOT NULL,
    host     TEXT    NOT NULL,
    source   TEXT    NOT NULL,
    severity INTEGER NOT NULL,
    facility INTEGER NOT NULL,
    tag      TEXT    NOT NULL,
    message  TEXT    NOT NULL
);
CREATE INDEX syslog_events_ts ON syslog_events (ts);

-- Network devices. Minimal for now: an exporter or syslog source whose
-- address is a device's host belongs to that device's site. The devices
-- feature adds its columns in a later migration.
CREATE TABLE devices (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT   NOT NULL,
    host       TEXT   NOT NULL DEFAULT '',
    kind       TEXT   NOT NULL DEFAULT '',
    site       TEXT   NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
CREATE INDEX devices_host ON devices (host);
