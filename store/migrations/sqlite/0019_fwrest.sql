-- The firewall REST driver's series (collectors/fwrest, spec 2.11/4.8):
-- one row per tunnel, SSL user, SD-WAN member and policy and poll. The
-- system, resource and interface samples go to device_resources and
-- device_ifaces like an SNMP device's.

-- IPsec tunnels (kind ipsec: name, remote = gateway, status up/down,
-- uptime, byte counters) and SSL VPN users (kind ssl: name = user,
-- remote = their address, status up, uptime since login).
CREATE TABLE device_vpn (
    device_id  BIGINT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    ts         BIGINT NOT NULL,
    kind       TEXT   NOT NULL,
    vdom       TEXT   NOT NULL DEFAULT '',
    name       TEXT   NOT NULL DEFAULT '',
    remote     TEXT   NOT NULL DEFAULT '',
    status     TEXT   NOT NULL DEFAULT '',
    uptime_sec BIGINT NOT NULL DEFAULT 0,
    in_bytes   BIGINT NOT NULL DEFAULT 0,
    out_bytes  BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX device_vpn_dev ON device_vpn (device_id, ts);
CREATE INDEX device_vpn_ts ON device_vpn (ts);

-- SD-WAN health checks per member.
CREATE TABLE device_sdwan (
    device_id  BIGINT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    ts         BIGINT NOT NULL,
    vdom       TEXT   NOT NULL DEFAULT '',
    name       TEXT   NOT NULL DEFAULT '',
    member     TEXT   NOT NULL DEFAULT '',
    status     TEXT   NOT NULL DEFAULT '',
    latency_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
    jitter_ms  DOUBLE PRECISION NOT NULL DEFAULT 0,
    loss_pct   DOUBLE PRECISION NOT NULL DEFAULT 0
);
CREATE INDEX device_sdwan_dev ON device_sdwan (device_id, ts);
CREATE INDEX device_sdwan_ts ON device_sdwan (ts);

-- Policy counters as the device reports them (cumulative); the route
-- answers their deltas over the window.
CREATE TABLE device_policies (
    device_id       BIGINT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    ts              BIGINT NOT NULL,
    vdom            TEXT   NOT NULL DEFAULT '',
    policy_id       BIGINT NOT NULL,
    hit_count       BIGINT NOT NULL DEFAULT 0,
    bytes           BIGINT NOT NULL DEFAULT 0,
    packets         BIGINT NOT NULL DEFAULT 0,
    active_sessions BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX device_policies_dev ON device_policies (device_id, ts);
CREATE INDEX device_policies_ts ON device_policies (ts);
