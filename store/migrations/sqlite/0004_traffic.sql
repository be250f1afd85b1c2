-- Minute history of the hub's own capture (spec 2.3, 2.4) and the bytes
-- exchanged with each public remote address per minute (spec 2.12, the geo
-- map). ts is the minute's start, Unix seconds. Both are raw time series:
-- the retention loop prunes them after -retention-hours.
CREATE TABLE traffic_minutes (
    ts          BIGINT  PRIMARY KEY,
    in_bytes    BIGINT  NOT NULL DEFAULT 0,
    out_bytes   BIGINT  NOT NULL DEFAULT 0,
    local_bytes BIGINT  NOT NULL DEFAULT 0,
    packets     BIGINT  NOT NULL DEFAULT 0,
    peak_in     BIGINT  NOT NULL DEFAULT 0, -- bytes in the minute's busiest second
    peak_out    BIGINT  NOT NULL DEFAULT 0,
    seconds     INTEGER NOT NULL DEFAULT 0  -- seconds of the minute the capture ran
);

CREATE TABLE remote_minutes (
    ts      BIGINT NOT NULL,
    ip      TEXT   NOT NULL,
    country TEXT   NOT NULL DEFAULT '',
    bytes   BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (ts, ip)
);
CREATE INDEX remote_minutes_country ON remote_minutes (ts, country);
