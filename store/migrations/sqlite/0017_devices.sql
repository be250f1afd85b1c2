-- Network devices (spec 2.11) polled by SNMP (collectors/snmp) or the
-- firewall REST driver, their samples, and the topology edges (spec 2.12).
-- Credentials are one vault-sealed JSON blob per device whose associated
-- data is "devices/<id>": a blob moved to another row fails to open.
-- 0005 made a minimal devices table (flow and syslog site scope); the
-- device feature adds its columns here.
ALTER TABLE devices ADD COLUMN snmp_version   TEXT    NOT NULL DEFAULT '2c'; -- 1, 2c, 3
ALTER TABLE devices ADD COLUMN v3_user        TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN v3_auth_proto  TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN v3_priv_proto  TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN secrets        BLOB; -- sealed {community, v3_auth_pass, v3_priv_pass, api_token}
ALTER TABLE devices ADD COLUMN vendor         TEXT    NOT NULL DEFAULT ''; -- fwvendor: the REST driver instead of SNMP
ALTER TABLE devices ADD COLUMN api_url        TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN api_verify_tls BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE devices ADD COLUMN vdom           TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN profile        TEXT    NOT NULL DEFAULT 'auto';
ALTER TABLE devices ADD COLUMN api_profile    TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN api_version    TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN api_caps       TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN poll_seconds   INTEGER NOT NULL DEFAULT 60;
ALTER TABLE devices ADD COLUMN enabled        BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE devices ADD COLUMN sys_name       TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN sys_descr      TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN sys_object_id  TEXT    NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN last_poll      BIGINT  NOT NULL DEFAULT 0;
ALTER TABLE devices ADD COLUMN last_error     TEXT    NOT NULL DEFAULT '';
CREATE INDEX devices_site ON devices (site);

-- One row per interface and poll. Rates are bytes/s since the previous
-- poll (NULL-free: 0 when there was none or the counter regressed);
-- utilisation is NULL without a trusted speed or when not oper-up.
CREATE TABLE device_ifaces (
    device_id    BIGINT  NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    ts           BIGINT  NOT NULL,
    if_index     INTEGER NOT NULL,
    name         TEXT    NOT NULL DEFAULT '',
    alias        TEXT    NOT NULL DEFAULT '',
    class        TEXT    NOT NULL DEFAULT 'unknown',
    speed_bps    BIGINT  NOT NULL DEFAULT 0,
    admin_up     BOOLEAN NOT NULL DEFAULT FALSE,
    oper_up      BOOLEAN NOT NULL DEFAULT FALSE,
    in_octets    BIGINT  NOT NULL DEFAULT 0,
    out_octets   BIGINT  NOT NULL DEFAULT 0,
    in_errors    BIGINT  NOT NULL DEFAULT 0,
    out_errors   BIGINT  NOT NULL DEFAULT 0,
    in_discards  BIGINT  NOT NULL DEFAULT 0,
    out_discards BIGINT  NOT NULL DEFAULT 0,
    rx_bps       DOUBLE PRECISION NOT NULL DEFAULT 0,
    tx_bps       DOUBLE PRECISION NOT NULL DEFAULT 0,
    rx_util_pct  DOUBLE PRECISION,
    tx_util_pct  DOUBLE PRECISION
);
CREATE INDEX device_ifaces_dev ON device_ifaces (device_id, ts);
CREATE INDEX device_ifaces_ts ON device_ifaces (ts);

-- CPU/RAM/disk percent (NULL: the device does not say) and sessions.
CREATE TABLE device_resources (
    device_id BIGINT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    ts        BIGINT NOT NULL,
    cpu_pct   DOUBLE PRECISION,
    mem_pct   DOUBLE PRECISION,
    disk_pct  DOUBLE PRECISION,
    sessions  BIGINT
);
CREATE INDEX device_resources_dev ON device_resources (device_id, ts);
CREATE INDEX device_resources_ts ON device_resources (ts);

-- Topology edges between two ends, each a device (by id), an agent (by
-- id) or a named neighbour not (yet) a device (id 0, name set). source:
-- lldp, cdp, arp, subnet, manual. One row per ends and source; ts is last
-- seen; rows other than manual ones go after 24 h unseen. util_pct and
-- port_down are the a-end port's state in the device's latest poll
-- (written with each poll, so the graph needs no sample query).
CREATE TABLE topology_edges (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    a_kind     TEXT   NOT NULL,
    a_id       BIGINT NOT NULL DEFAULT 0,
    a_name     TEXT   NOT NULL DEFAULT '',
    a_port     TEXT   NOT NULL DEFAULT '',
    b_kind     TEXT   NOT NULL,
    b_id       BIGINT NOT NULL DEFAULT 0,
    b_name     TEXT   NOT NULL DEFAULT '',
    b_port     TEXT   NOT NULL DEFAULT '',
    b_addr     TEXT   NOT NULL DEFAULT '',
    source     TEXT   NOT NULL,
    ts         BIGINT NOT NULL,
    util_pct   DOUBLE PRECISION,
    port_down  BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (a_kind, a_id, a_port, b_kind, b_id, b_name, b_port, source)
);
CREATE INDEX topology_edges_ts ON topology_edges (ts);
