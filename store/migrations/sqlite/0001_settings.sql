-- Small named documents (usually JSON) holding the configuration of
-- later features. updated_at is Unix seconds.
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
