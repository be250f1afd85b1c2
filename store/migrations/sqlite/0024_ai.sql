-- The advisory assistant (issue 32, spec 2.8, 4.5). A provider's API key
-- is sealed by the vault with the row's id as associated data, so a blob
-- copied to another row does not open; an empty api_key means none.
-- is_local is computed at registration from the addresses the base URL
-- resolves to (loopback, RFC 1918, ULA).
CREATE TABLE ai_providers (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL,
    base_url      TEXT    NOT NULL,
    default_model TEXT    NOT NULL DEFAULT '',
    enabled       INTEGER NOT NULL DEFAULT 1,
    no_think      INTEGER NOT NULL DEFAULT 0,
    max_tokens    INTEGER NOT NULL DEFAULT 0,
    temperature   REAL,
    pseudonymise  INTEGER NOT NULL DEFAULT 1,
    is_local      INTEGER NOT NULL DEFAULT 0,
    api_key       BLOB    NOT NULL DEFAULT x'',
    created_ts    BIGINT  NOT NULL,
    updated_ts    BIGINT  NOT NULL
);

-- Conversations: scope, site (of the scope's object, for site-bound
-- readers), who started it (source user, triage or nightly), the last
-- context sent (its SHA-256 is in the ai.analyze audit record too) and
-- the pseudonym map (token -> real value, JSON), which never leaves the
-- hub but to the console. provider_id is no foreign key: deleting a
-- provider keeps its conversations. archived_ts > 0: archived by DELETE,
-- pruned 90 days later.
CREATE TABLE ai_conversations (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_kind     TEXT    NOT NULL,
    scope_ref      TEXT    NOT NULL DEFAULT '',
    site           TEXT    NOT NULL DEFAULT '',
    source         TEXT    NOT NULL DEFAULT 'user',
    provider_id    BIGINT  NOT NULL,
    model          TEXT    NOT NULL DEFAULT '',
    title          TEXT    NOT NULL DEFAULT '',
    created_by     TEXT    NOT NULL DEFAULT '',
    created_ts     BIGINT  NOT NULL,
    updated_ts     BIGINT  NOT NULL,
    archived_ts    BIGINT  NOT NULL DEFAULT 0,
    context_sha256 TEXT    NOT NULL DEFAULT '',
    context_bytes  INTEGER NOT NULL DEFAULT 0,
    pseudonymised  INTEGER NOT NULL DEFAULT 1,
    pseudonyms     TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX ai_conversations_updated ON ai_conversations (updated_ts DESC, id DESC);
CREATE INDEX ai_conversations_scope ON ai_conversations (scope_kind, scope_ref, source);
CREATE INDEX ai_conversations_archived ON ai_conversations (archived_ts);

-- Messages, in order: user, assistant and context (the facts sent).
-- partial = 1: an answer cut short (client gone, provider failed), with
-- what had arrived.
CREATE TABLE ai_messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id BIGINT  NOT NULL REFERENCES ai_conversations (id) ON DELETE CASCADE,
    role            TEXT    NOT NULL,
    content         TEXT    NOT NULL,
    tokens_in       INTEGER NOT NULL DEFAULT 0,
    tokens_out      INTEGER NOT NULL DEFAULT 0,
    error           TEXT    NOT NULL DEFAULT '',
    partial         INTEGER NOT NULL DEFAULT 0,
    created_ts      BIGINT  NOT NULL
);
CREATE INDEX ai_messages_conversation ON ai_messages (conversation_id, id);
