-- Flow tables by day (issue 16; see store/flow_days.go): flow_minutes and
-- flow_hours become range-partitioned on ts, one partition per UTC day
-- (<table>_dYYYYMMDD), which the hub creates ahead (retention: today and
-- the two days after; the writer: each day it writes) and drops whole when
-- the day expires. <table>_default is the DEFAULT partition: an insert
-- never fails for a missing day; creating a day moves its rows out of it.
--
-- The existing rows are kept where they are, without a copy: the old table
-- becomes the partition of every time up to the end of today (or of its
-- newest row's day, if later), named after that last day, so retention
-- drops it whole like any day once that day expires. Not the DEFAULT
-- partition: creating each new day would then scan all of it under an
-- exclusive lock. An old table without rows is dropped. Readers query the parents by the tables' old names.
ALTER TABLE flow_minutes RENAME TO flow_minutes_old;
ALTER INDEX flow_minutes_ts RENAME TO flow_minutes_old_ts;
ALTER INDEX flow_minutes_pair RENAME TO flow_minutes_old_pair;
CREATE TABLE flow_minutes (
    ts         BIGINT  NOT NULL,
    exporter   TEXT    NOT NULL,
    src        TEXT    NOT NULL,
    dst        TEXT    NOT NULL,
    src_port   INTEGER NOT NULL,
    dst_port   INTEGER NOT NULL,
    proto      INTEGER NOT NULL,
    packets    BIGINT  NOT NULL,
    octets     BIGINT  NOT NULL,
    flows      BIGINT  NOT NULL,
    first_seen BIGINT  NOT NULL,
    last_seen  BIGINT  NOT NULL
) PARTITION BY RANGE (ts);
CREATE TABLE flow_minutes_default PARTITION OF flow_minutes DEFAULT;
DO $$
DECLARE
    newest BIGINT;
    last_end BIGINT;
    name TEXT;
BEGIN
    SELECT MAX(ts) INTO newest FROM flow_minutes_old;
    IF newest IS NULL THEN
        DROP TABLE flow_minutes_old;
        RETURN;
    END IF;
    last_end := (GREATEST(newest, extract(epoch FROM now())::BIGINT) / 86400 + 1) * 86400;
    name := 'flow_minutes_d' || to_char(to_timestamp(last_end - 86400) AT TIME ZONE 'UTC', 'YYYYMMDD');
    EXECUTE format('ALTER TABLE flow_minutes_old RENAME TO %I', name);
    EXECUTE format('ALTER TABLE flow_minutes ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%s)', name, last_end);
END $$;
-- Partitioned indexes: every partition gets its own (the old table's are
-- attached, not rebuilt).
CREATE INDEX flow_minutes_ts ON flow_minutes (ts);
CREATE INDEX flow_minutes_pair ON flow_minutes (src, dst, ts);

ALTER TABLE flow_hours RENAME TO flow_hours_old;
ALTER INDEX flow_hours_ts RENAME TO flow_hours_old_ts;
CREATE TABLE flow_hours (
    ts         BIGINT  NOT NULL,
    exporter   TEXT    NOT NULL,
    src        TEXT    NOT NULL,
    dst        TEXT    NOT NULL,
    src_port   INTEGER NOT NULL,
    dst_port   INTEGER NOT NULL,
    proto      INTEGER NOT NULL,
    packets    BIGINT  NOT NULL,
    octets     BIGINT  NOT NULL,
    flows      BIGINT  NOT NULL,
    first_seen BIGINT  NOT NULL,
    last_seen  BIGINT  NOT NULL
) PARTITION BY RANGE (ts);
CREATE TABLE flow_hours_default PARTITION OF flow_hours DEFAULT;
DO $$
DECLARE
    newest BIGINT;
    last_end BIGINT;
    name TEXT;
BEGIN
    SELECT MAX(ts) INTO newest FROM flow_hours_old;
    IF newest IS NULL THEN
        DROP TABLE flow_hours_old;
        RETURN;
    END IF;
    last_end := (GREATEST(newest, extract(epoch FROM now())::BIGINT) / 86400 + 1) * 86400;
    name := 'flow_hours_d' || to_char(to_timestamp(last_end - 86400) AT TIME ZONE 'UTC', 'YYYYMMDD');
    EXECUTE format('ALTER TABLE flow_hours_old RENAME TO %I', name);
    EXECUTE format('ALTER TABLE flow_hours ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%s)', name, last_end);
END $$;
CREATE INDEX flow_hours_ts ON flow_hours (ts);
