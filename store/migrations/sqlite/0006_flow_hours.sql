-- Hourly flow aggregates, written beside flow_minutes, for the 6 h and
-- 24 h conversation windows: reading each hour's top rows by octets
-- through the index keeps a 24 h query fast however many distinct
-- conversations there were (exact for the heavy hitters). Only octets is
-- indexed: every index is paid on each upsert of the ingest path, and the
-- other sort orders scan an hour's rows instead.
CREATE TABLE flow_hours (
    ts        BIGINT  NOT NULL,
    exporter  TEXT    NOT NULL,
    src       TEXT    NOT NULL,
    dst       TEXT    NOT NULL,
    src_port  INTEGER NOT NULL,
    dst_port  INTEGER NOT NULL,
    proto     INTEGER NOT NULL,
    packets   BIGINT  NOT NULL,
    octets    BIGINT  NOT NULL,
    flows     BIGINT  NOT NULL,
    last_seen BIGINT  NOT NULL,
    PRIMARY KEY (ts, exporter, src, dst, src_port, dst_port, proto)
);
CREATE INDEX flow_hours_octets ON flow_hours (ts, octets);
