-- The datagram as received, kept only for messages whose stored text
-- differs from it (invalid UTF-8 or NUL replaced by U+FFFD): byte-exact
-- evidence without a cost for clean messages (RELIABILITY case 4).
ALTER TABLE syslog_events ADD COLUMN raw BLOB;
