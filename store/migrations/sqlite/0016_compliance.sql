-- Compliance log (issue 21, spec 1 capability 8): the hash-chained access
-- records, their hourly Merkle checkpoints and daily seals, and the
-- auditors' reviews. seq is the chain position (1, 2, ...); at the append
-- time (Unix seconds, never decreasing) that places a record in an hour;
-- vals the record's field values (u32 big-endian length + bytes each);
-- salt the 16 random bytes its PII fields are committed with; hash the
-- chain value h_seq. See README "Compliance log" for the encoding.
CREATE TABLE compliance_records (
    seq  BIGINT  PRIMARY KEY,
    at   BIGINT  NOT NULL,
    ts   BIGINT  NOT NULL,
    kind INTEGER NOT NULL,
    vals BLOB    NOT NULL,
    salt BLOB    NOT NULL,
    hash BLOB    NOT NULL
);
CREATE INDEX compliance_records_at ON compliance_records (at);

-- One signed statement per hour (kind 'hourly') and per day (kind
-- 'daily'); body is the exact signed text, sig its ed25519 signature, hash
-- SHA-256(body) which the next statement's "prev" line carries.
CREATE TABLE compliance_checkpoints (
    id         BIGINT  PRIMARY KEY,
    kind       TEXT    NOT NULL,
    period     BIGINT  NOT NULL,
    body       TEXT    NOT NULL,
    sig        BLOB    NOT NULL,
    hash       BLOB    NOT NULL,
    tsa_token  BLOB,
    tsa_status TEXT    NOT NULL DEFAULT 'none',
    worm       TEXT    NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX compliance_checkpoints_period ON compliance_checkpoints (kind, period);

CREATE TABLE compliance_reviews (
    id      BIGINT  PRIMARY KEY,
    ts      BIGINT  NOT NULL,
    author  TEXT    NOT NULL DEFAULT '',
    kind    TEXT    NOT NULL,
    period  TEXT    NOT NULL,
    notes   TEXT    NOT NULL DEFAULT '',
    finding TEXT    NOT NULL DEFAULT ''
);

-- ISMS registers (spec 4.10 /api/v1/isms/*): kind 'assets', 'risks' or
-- 'soa'; ref the entry's key within its kind (for 'soa' the ISO
-- 27001:2022 Annex A control id); data the entry as JSON.
CREATE TABLE isms_records (
    id         BIGINT  PRIMARY KEY,
    kind       TEXT    NOT NULL,
    ref        TEXT    NOT NULL,
    data       TEXT    NOT NULL,
    updated_at BIGINT  NOT NULL,
    updated_by TEXT    NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX isms_records_ref ON isms_records (kind, ref);
