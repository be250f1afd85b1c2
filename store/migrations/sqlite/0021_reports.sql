-- Reports (issue 31, spec 4.10): the schedules that mail reports and the
-- archive of generated reports. A schedule's last_slot is the Unix time
-- of the last slot claimed: the runner claims a slot with
-- UPDATE ... WHERE last_slot < slot before it generates, so no slot runs
-- twice, across restarts and across hubs sharing the database.
-- recipients is a JSON array of bare addresses.
CREATE TABLE report_schedules (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    days        INTEGER NOT NULL,
    format      TEXT    NOT NULL,
    site        TEXT    NOT NULL DEFAULT '',
    recipients  TEXT    NOT NULL DEFAULT '[]',
    spec        TEXT    NOT NULL,
    timezone    TEXT    NOT NULL,
    enabled     INTEGER NOT NULL DEFAULT 1,
    last_slot   BIGINT  NOT NULL DEFAULT 0,
    last_status TEXT    NOT NULL DEFAULT '',
    created_at  BIGINT  NOT NULL,
    created_by  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX report_schedules_site ON report_schedules (site, id);

-- The archive: each generated report with its body and the SHA-256 of
-- the body and of the report's data (the check of a downloaded copy).
-- schedule_id is 0 for a report generated on request; it is no foreign
-- key: deleting a schedule keeps the reports it made.
CREATE TABLE report_archive (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    schedule_id  BIGINT  NOT NULL DEFAULT 0,
    type         TEXT    NOT NULL,
    format       TEXT    NOT NULL,
    site         TEXT    NOT NULL DEFAULT '',
    days         INTEGER NOT NULL,
    from_ts      BIGINT  NOT NULL,
    to_ts        BIGINT  NOT NULL,
    filename     TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    size         BIGINT  NOT NULL,
    sha256       TEXT    NOT NULL,
    data_sha256  TEXT    NOT NULL,
    delivery     TEXT    NOT NULL DEFAULT '',
    generated_at BIGINT  NOT NULL,
    generated_by TEXT    NOT NULL DEFAULT '',
    body         BLOB    NOT NULL
);
CREATE INDEX report_archive_site ON report_archive (site, generated_at DESC, id DESC);
CREATE INDEX report_archive_at ON report_archive (generated_at);
