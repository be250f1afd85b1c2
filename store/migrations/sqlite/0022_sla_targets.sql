-- SLA targets (spec 4.10 /api/v1/sla/targets, 6.3 sla_breach) and what
-- their measurements need that was not stored yet.
--
-- sla_targets: one target per row; scope 'site' (site '' = every site),
-- 'agent' (agent_id) or 'device' (device_id); site is the agent's or the
-- device's site for those scopes, so a site-bound caller's list is one
-- WHERE.
CREATE TABLE sla_targets (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT    NOT NULL,
    metric       TEXT    NOT NULL, -- agent_uptime, device_availability, iface_util_p95, packet_drop
    scope        TEXT    NOT NULL, -- site, agent, device
    site         TEXT    NOT NULL DEFAULT '',
    agent_id     BIGINT  NOT NULL DEFAULT 0,
    device_id    BIGINT  NOT NULL DEFAULT 0,
    threshold    DOUBLE PRECISION NOT NULL, -- percent, 0-100
    window_hours INTEGER NOT NULL,
    created_at   BIGINT  NOT NULL,
    created_by   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX sla_targets_site ON sla_targets (site);

-- device_polls: the outcome of every device poll (SNMP or firewall REST),
-- counted per device and minute (ts = the minute's start): the history
-- device_availability needs, which devices.last_poll/last_error cannot
-- give. Written by SaveDevicePoll; a raw time series for the retention
-- loop (store.SLATables).
CREATE TABLE device_polls (
    device_id BIGINT  NOT NULL,
    ts        BIGINT  NOT NULL,
    ok        INTEGER NOT NULL DEFAULT 0,
    failed    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (device_id, ts)
);
CREATE INDEX device_polls_ts ON device_polls (ts);

-- Packets the kernel dropped before the hub capture read them, per
-- minute (packet_drop = dropped / (packets + dropped)).
ALTER TABLE traffic_minutes ADD COLUMN dropped BIGINT NOT NULL DEFAULT 0;
