-- Flows at real-world cardinality (issue 16). flow_minutes and flow_hours
-- become append-only: each exporter's minute is summed in memory and
-- written once when it closes, as a plain sorted INSERT (no upsert, no
-- primary key to keep in order), so the cost no longer grows with the
-- number of distinct conversations. A key may therefore have several rows
-- in one period (a late flow appends one): every query sums. Rows with
-- src = '' are the counted remainder ("other") of one exporter and
-- protocol beyond the detail budget, so totals stay exact. first_seen is
-- the earliest record time, not the period's start.
CREATE TABLE flow_minutes_new (
    ts         BIGINT  NOT NULL, -- the minute's start (Unix seconds)
    exporter   TEXT    NOT NULL,
    src        TEXT    NOT NULL, -- '' for the other row
    dst        TEXT    NOT NULL,
    src_port   INTEGER NOT NULL,
    dst_port   INTEGER NOT NULL,
    proto      INTEGER NOT NULL,
    packets    BIGINT  NOT NULL,
    octets     BIGINT  NOT NULL,
    flows      BIGINT  NOT NULL, -- flow records summed into the row
    first_seen BIGINT  NOT NULL, -- earliest record time
    last_seen  BIGINT  NOT NULL  -- latest record time
);
INSERT INTO flow_minutes_new SELECT ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, ts, last_seen FROM flow_minutes ORDER BY ts;
DROP TABLE flow_minutes;
ALTER TABLE flow_minutes_new RENAME TO flow_minutes;
CREATE INDEX flow_minutes_ts ON flow_minutes (ts);
CREATE INDEX flow_minutes_pair ON flow_minutes (src, dst, ts);

-- Hours are rolled up from closed minutes in the background (top rows per
-- exporter plus the other remainder), not upserted on every write.
CREATE TABLE flow_hours_new (
    ts         BIGINT  NOT NULL, -- the hour's start
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
);
INSERT INTO flow_hours_new SELECT ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, ts, last_seen FROM flow_hours ORDER BY ts;
DROP TABLE flow_hours;
ALTER TABLE flow_hours_new RENAME TO flow_hours;
CREATE INDEX flow_hours_ts ON flow_hours (ts);

-- Which hours have minutes and whether they are rolled into flow_hours:
-- a minute written for a built hour (a late flow) is appended to the hour
-- too. The old tables' hours were kept live, so they are all built.
CREATE TABLE flow_hour_state (
    ts    BIGINT  NOT NULL PRIMARY KEY, -- the hour's start
    built INTEGER NOT NULL              -- 1 once rolled into flow_hours
);
INSERT INTO flow_hour_state SELECT DISTINCT ts, 1 FROM flow_hours;
