-- The tamper-evident audit chain (spec 2.10). id is assigned by the
-- append, contiguous from 1; hash is the SHA-256 of the record (see
-- store.AuditHash) and prev_hash the hash of record id-1, so an edited,
-- deleted, reordered or inserted row breaks the chain. ts is Unix
-- seconds. The v2 columns (actor_type .. after_json) stay '' for v1
-- records, which then hash without them. The chain's head (id:hash) is
-- kept in settings under audit.head, so a truncated tail shows.
CREATE TABLE audit_events (
    id          BIGINT PRIMARY KEY,
    ts          BIGINT NOT NULL,
    username    TEXT NOT NULL DEFAULT '',
    role        TEXT NOT NULL DEFAULT '',
    action      TEXT NOT NULL DEFAULT '',
    target      TEXT NOT NULL DEFAULT '',
    detail      TEXT NOT NULL DEFAULT '',
    ip          TEXT NOT NULL DEFAULT '',
    prev_hash   TEXT NOT NULL DEFAULT '',
    hash        TEXT NOT NULL DEFAULT '',
    actor_type  TEXT NOT NULL DEFAULT '',
    request_id  TEXT NOT NULL DEFAULT '',
    user_agent  TEXT NOT NULL DEFAULT '',
    result      TEXT NOT NULL DEFAULT '',
    before_json TEXT NOT NULL DEFAULT '',
    after_json  TEXT NOT NULL DEFAULT ''
);

-- The list filters: date range, action (exact, or prefix through LIKE:
-- text_pattern_ops serves both, whatever the database's collation) and
-- actor.
CREATE INDEX audit_events_ts ON audit_events (ts);
CREATE INDEX audit_events_action ON audit_events (action text_pattern_ops);
CREATE INDEX audit_events_username ON audit_events (username);
