-- Agent fleet (spec 2.9, 2.10, 4.6). Tokens are stored only as SHA-256
-- hashes. An agent's latest state (rates, counters, connection inventory)
-- lives on its row and is replaced by every telemetry batch; the time
-- series for the history chart is agent_samples, one row per batch.
CREATE TABLE enroll_tokens (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL,
    site          TEXT    NOT NULL DEFAULT '',
    token_hash    TEXT    NOT NULL UNIQUE,
    created_by    TEXT    NOT NULL DEFAULT '',
    created_at    BIGINT  NOT NULL,
    expires_at    BIGINT  NOT NULL DEFAULT 0, -- 0: never
    max_uses      INTEGER NOT NULL DEFAULT 1, -- 0: unlimited
    uses          INTEGER NOT NULL DEFAULT 0,
    allowed_cidrs TEXT    NOT NULL DEFAULT '', -- comma-separated prefixes; empty: any
    last_used     BIGINT  NOT NULL DEFAULT 0,
    revoked_at    BIGINT  NOT NULL DEFAULT 0  -- 0: active
);

CREATE TABLE agents (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    name             TEXT    NOT NULL,            -- display name (renamable)
    site             TEXT    NOT NULL DEFAULT '',
    machine_id       TEXT    NOT NULL DEFAULT '',
    token_hash       TEXT    NOT NULL UNIQUE,
    version          TEXT    NOT NULL DEFAULT '',
    protocol_version INTEGER NOT NULL DEFAULT 1,
    os               TEXT    NOT NULL DEFAULT '',
    arch             TEXT    NOT NULL DEFAULT '',
    remote_ip        TEXT    NOT NULL DEFAULT '',
    enroll_token_id  BIGINT  NOT NULL DEFAULT 0,  -- 0: the static token
    enrolled_at      BIGINT  NOT NULL,
    last_seen        BIGINT  NOT NULL DEFAULT 0,
    last_seq         BIGINT  NOT NULL DEFAULT 0,
    attr_method      TEXT    NOT NULL DEFAULT 'off',
    attr_iface       TEXT    NOT NULL DEFAULT '',
    attr_note        TEXT    NOT NULL DEFAULT '',
    rates            TEXT    NOT NULL DEFAULT '[]',
    counters         TEXT    NOT NULL DEFAULT '[]',
    conns            INTEGER NOT NULL DEFAULT 0,
    connections      TEXT    NOT NULL DEFAULT '[]',
    dropped          BIGINT  NOT NULL DEFAULT 0,  -- batches the agent reported discarding
    cert_not_after   BIGINT  NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX agents_machine_id ON agents (machine_id) WHERE machine_id <> '';
CREATE INDEX agents_last_seen ON agents (last_seen);

CREATE TABLE agent_samples (
    agent_id BIGINT  NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    seq      BIGINT  NOT NULL,
    ts       BIGINT  NOT NULL,
    rx_bps   DOUBLE PRECISION NOT NULL, -- "in", bytes/s
    tx_bps   DOUBLE PRECISION NOT NULL, -- "out", bytes/s
    local_bps DOUBLE PRECISION NOT NULL, -- loopback, bytes/s
    pps      DOUBLE PRECISION NOT NULL,
    has_rate BOOLEAN NOT NULL,
    conns    INTEGER NOT NULL,
    PRIMARY KEY (agent_id, seq)
);
CREATE INDEX agent_samples_ts ON agent_samples (ts);
CREATE INDEX agent_samples_agent_ts ON agent_samples (agent_id, ts);
