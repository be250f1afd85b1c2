-- Identity: RBAC users (local or linked to an OpenID provider by issuer and
-- subject), API tokens and database-backed sessions. Tokens and sessions
-- are stored only as SHA-256 hashes of the secret.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL DEFAULT '',
    role          TEXT    NOT NULL,
    site          TEXT    NOT NULL DEFAULT '',
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    oidc_issuer   TEXT    NOT NULL DEFAULT '',
    oidc_subject  TEXT    NOT NULL DEFAULT '',
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL
);
CREATE UNIQUE INDEX users_oidc_identity ON users (oidc_issuer, oidc_subject) WHERE oidc_subject <> '';

CREATE TABLE api_tokens (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT   NOT NULL,
    role       TEXT   NOT NULL,
    site       TEXT   NOT NULL DEFAULT '',
    token_hash TEXT   NOT NULL UNIQUE,
    created_by TEXT   NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    last_used  BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE sessions (
    token_hash TEXT   PRIMARY KEY,
    user_id    BIGINT NOT NULL DEFAULT 0,
    username   TEXT   NOT NULL,
    role       TEXT   NOT NULL,
    site       TEXT   NOT NULL DEFAULT '',
    actor_type TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_expires_at ON sessions (expires_at);
CREATE INDEX sessions_user_id ON sessions (user_id);
