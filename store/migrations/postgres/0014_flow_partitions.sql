-- Flow tables by day (issue 16; see store/flow_days.go): flow_minutes and
-- flow_hours become range-partitioned on ts, one partition per UTC day
-- (<table>_dYYYYMMDD), which the hub creates ahead (retention: today and
-- the two days after; the writer: each day it writes) and drops whole when
-- the day expires. <table>_default is the DEFAULT partition: an insert
-- never fails for a missing day; creating a day moves its rows out of it.
-- The existing rows are kept: the old table becomes the DEFAULT partition
-- as it is (no copy), and retention still purges the default row by row
-- (a one-time cost of at most the retention's rows). Readers query the
-- parents by the tables' old names.
ALTER TABLE flow_minutes RENAME TO flow_minutes_default;
ALTER INDEX flow_minutes_ts RENAME TO flow_minutes_default_ts;
ALTER INDEX flow_minutes_pair RENAME TO flow_minutes_default_pair;
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
ALTER TABLE flow_minutes ATTACH PARTITION flow_minutes_default DEFAULT;
-- Partitioned indexes: every partition gets its own (the default's
-- existing ones are attached, not rebuilt).
CREATE INDEX flow_minutes_ts ON flow_minutes (ts);
CREATE INDEX flow_minutes_pair ON flow_minutes (src, dst, ts);

ALTER TABLE flow_hours RENAME TO flow_hours_default;
ALTER INDEX flow_hours_ts RENAME TO flow_hours_default_ts;
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
ALTER TABLE flow_hours ATTACH PARTITION flow_hours_default DEFAULT;
CREATE INDEX flow_hours_ts ON flow_hours (ts);
