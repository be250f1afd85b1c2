-- Deep collection (spec 2.9, 4.6, 4.10; issue 17): what agents report per
-- process, per TLS SNI / HTTP Host and per DNS name, kept as per-agent,
-- per-minute aggregates (ts is the minute's start, Unix seconds). Agents
-- send deltas per interval; a batch adds to these tables once, which
-- agent_deep_seqs records in the same transaction (a replayed batch finds
-- its (agent_id, seq) there and adds nothing).
CREATE TABLE agent_deep_seqs (
    agent_id BIGINT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    seq      BIGINT NOT NULL,
    ts       BIGINT NOT NULL,
    PRIMARY KEY (agent_id, seq)
);
CREATE INDEX agent_deep_seqs_ts ON agent_deep_seqs (ts);

-- Bytes per process and PID; process '(unattributed)' with pid 0 holds
-- what the agent could not attribute.
CREATE TABLE agent_proc_minutes (
    agent_id  BIGINT  NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    ts        BIGINT  NOT NULL,
    process   TEXT    NOT NULL,
    pid       INTEGER NOT NULL,
    bytes_in  BIGINT  NOT NULL,
    bytes_out BIGINT  NOT NULL,
    PRIMARY KEY (agent_id, ts, process, pid)
);
CREATE INDEX agent_proc_minutes_ts ON agent_proc_minutes (ts);

-- The fleet-wide list of processes reads these two instead of every
-- agent's rows (10 000 agents with 50 processes are 30 million rows an
-- hour). proc_site_minutes sums the bytes per minute, site and process (a
-- few hundred rows a minute); deleting an agent subtracts its rows.
CREATE TABLE proc_site_minutes (
    ts        BIGINT NOT NULL,
    site      TEXT   NOT NULL,
    process   TEXT   NOT NULL,
    bytes_in  BIGINT NOT NULL,
    bytes_out BIGINT NOT NULL,
    PRIMARY KEY (ts, site, process)
);
-- agent_proc_last is the last minute each agent reported each process:
-- an agent ran a process within a window ending now exactly when its ts
-- is at or after the window's start, so agent_count is a count of these
-- rows (for the few processes listed, through the index).
CREATE TABLE agent_proc_last (
    agent_id BIGINT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    process  TEXT   NOT NULL,
    site     TEXT   NOT NULL,
    ts       BIGINT NOT NULL,
    PRIMARY KEY (agent_id, process)
);
CREATE INDEX agent_proc_last_process ON agent_proc_last (process, ts);
CREATE INDEX agent_proc_last_ts ON agent_proc_last (ts);

-- The (unattributed) bytes by the reason the agent gave.
CREATE TABLE agent_unattributed_minutes (
    agent_id BIGINT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    ts       BIGINT NOT NULL,
    reason   TEXT   NOT NULL,
    bytes    BIGINT NOT NULL,
    packets  BIGINT NOT NULL,
    PRIMARY KEY (agent_id, ts, reason)
);
CREATE INDEX agent_unattributed_minutes_ts ON agent_unattributed_minutes (ts);

-- TLS ClientHello SNI (kind 'tls') and HTTP Host (kind 'http').
CREATE TABLE agent_l7_minutes (
    agent_id BIGINT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    ts       BIGINT NOT NULL,
    host     TEXT   NOT NULL,
    kind     TEXT   NOT NULL,
    process  TEXT   NOT NULL,
    bytes    BIGINT NOT NULL,
    hits     BIGINT NOT NULL,
    PRIMARY KEY (agent_id, ts, host, kind, process)
);
CREATE INDEX agent_l7_minutes_ts ON agent_l7_minutes (ts);
-- The fleet-wide L7 list's sums and last reports, as for processes.
CREATE TABLE l7_site_minutes (
    ts      BIGINT NOT NULL,
    site    TEXT   NOT NULL,
    host    TEXT   NOT NULL,
    kind    TEXT   NOT NULL,
    process TEXT   NOT NULL,
    bytes   BIGINT NOT NULL,
    hits    BIGINT NOT NULL,
    PRIMARY KEY (ts, site, host, kind, process)
);
CREATE TABLE agent_l7_last (
    agent_id BIGINT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    host     TEXT   NOT NULL,
    kind     TEXT   NOT NULL,
    process  TEXT   NOT NULL,
    site     TEXT   NOT NULL,
    ts       BIGINT NOT NULL,
    PRIMARY KEY (agent_id, host, kind, process)
);
CREATE INDEX agent_l7_last_key ON agent_l7_last (host, kind, process, ts);
CREATE INDEX agent_l7_last_ts ON agent_l7_last (ts);

CREATE TABLE agent_dns_minutes (
    agent_id  BIGINT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    ts        BIGINT NOT NULL,
    domain    TEXT   NOT NULL,
    process   TEXT   NOT NULL,
    queries   BIGINT NOT NULL,
    responses BIGINT NOT NULL,
    PRIMARY KEY (agent_id, ts, domain, process)
);
CREATE INDEX agent_dns_minutes_ts ON agent_dns_minutes (ts);
-- The fleet-wide DNS list's sums and last reports, as for processes.
CREATE TABLE dns_site_minutes (
    ts        BIGINT NOT NULL,
    site      TEXT   NOT NULL,
    domain    TEXT   NOT NULL,
    process   TEXT   NOT NULL,
    queries   BIGINT NOT NULL,
    responses BIGINT NOT NULL,
    PRIMARY KEY (ts, site, domain, process)
);
CREATE TABLE agent_dns_last (
    agent_id BIGINT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    domain   TEXT   NOT NULL,
    process  TEXT   NOT NULL,
    site     TEXT   NOT NULL,
    ts       BIGINT NOT NULL,
    PRIMARY KEY (agent_id, domain, process)
);
CREATE INDEX agent_dns_last_key ON agent_dns_last (domain, process, ts);
CREATE INDEX agent_dns_last_ts ON agent_dns_last (ts);

-- Bytes per process and remote end: the process detail's destinations
-- and the connection.seen events.
CREATE TABLE agent_remote_minutes (
    agent_id    BIGINT  NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    ts          BIGINT  NOT NULL,
    process     TEXT    NOT NULL,
    proto       TEXT    NOT NULL,
    remote_ip   TEXT    NOT NULL,
    remote_port INTEGER NOT NULL,
    bytes_in    BIGINT  NOT NULL,
    bytes_out   BIGINT  NOT NULL,
    PRIMARY KEY (agent_id, ts, process, proto, remote_ip, remote_port)
);
CREATE INDEX agent_remote_minutes_ts ON agent_remote_minutes (ts);
