-- Report rollups (issue 31 figure): the reports' reads pre-aggregated per
-- closed UTC day, so a 30- or 90-day report reads tens of thousands of
-- rows instead of millions. Written by store.RollupReportDay (the reports'
-- rollup job, app/reports.Rollup); read by the Report* reads for the whole
-- UTC days of their window that are rolled up, the rest (partial edge
-- days of a report zone that is not UTC, today, a day not rolled yet)
-- being read live from the raw tables.
--
-- Exactness rule: a rolled day holds what the live reads would return for
-- it at rollup time. Totals (traffic, per-minute traffic and hence its
-- percentiles, protocol, flow and per-agent minute counts) are exact.
-- The top lists (flows: conversations, destinations, protocols; the
-- deep collection: processes, DNS names, applications) keep, per (day,
-- scope, kind), the K busiest keys (K = store.ReportRollupTopK) and one
-- remainder row (k1 = '') summing the rest: their totals stay exact; a
-- top-N over several days is exact whenever each of its keys is in the
-- top K of every day it occurs in; the count of keys ("and N more") is
-- exact when no day of the window had more than K keys, else a lower
-- bound (store.ReportTop.AtLeast is then set). A day is rolled once: rows arriving
-- later for it (late flows), or an agent or device moved to another site
-- afterwards, are not reflected in it.
--
-- scope is '' for every site (the hub's own capture included) or a site.
-- Every table has ts (the day's start, or the minute's) for retention.

-- report_rollup_days: one row per rolled UTC day (ts = its midnight),
-- written in the transaction that writes the day's rows.
CREATE TABLE report_rollup_days (
    ts      BIGINT NOT NULL PRIMARY KEY,
    done_at BIGINT NOT NULL
);

-- report_traffic_rollup: the traffic of each minute in scope (the sum
-- ReportTrafficMinutes returns), one row a minute that has any.
CREATE TABLE report_traffic_rollup (
    scope TEXT   NOT NULL,
    ts    BIGINT NOT NULL,
    rx    DOUBLE PRECISION NOT NULL,
    tx    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (scope, ts)
);
CREATE INDEX report_traffic_rollup_ts ON report_traffic_rollup (ts);

-- report_flow_rollup: the flows of a day in scope by kind: 'c'
-- conversations (k1 src, k2 dst), 'd' destinations (k1 dst), 'p'
-- protocols (k1 protocol number); k1 = '' is the remainder row.
CREATE TABLE report_flow_rollup (
    ts      BIGINT NOT NULL,
    scope   TEXT   NOT NULL,
    kind    TEXT   NOT NULL,
    k1      TEXT   NOT NULL,
    k2      TEXT   NOT NULL,
    octets  BIGINT NOT NULL,
    packets BIGINT NOT NULL,
    flows   BIGINT NOT NULL,
    PRIMARY KEY (scope, kind, ts, k1, k2)
);
CREATE INDEX report_flow_rollup_ts ON report_flow_rollup (ts);

-- report_agent_rollup: the minutes of a day in which an agent reported a
-- telemetry batch (agent uptime).
CREATE TABLE report_agent_rollup (
    ts       BIGINT NOT NULL,
    agent_id BIGINT NOT NULL,
    minutes  BIGINT NOT NULL,
    PRIMARY KEY (ts, agent_id)
);

-- report_deep_rollup: the agents' deep collection of a day in scope by
-- kind: 'proc' processes (k1 process; s1 bytes in, s2 bytes out), 'dns'
-- (k1 domain; s1 queries, s2 responses), 'l7' applications (k1 host, k2
-- kind; s1 bytes, s2 hits); the top K keys and a remainder row (k1 '').
CREATE TABLE report_deep_rollup (
    ts    BIGINT NOT NULL,
    scope TEXT   NOT NULL,
    kind  TEXT   NOT NULL,
    k1    TEXT   NOT NULL,
    k2    TEXT   NOT NULL,
    s1    BIGINT NOT NULL,
    s2    BIGINT NOT NULL,
    PRIMARY KEY (scope, kind, ts, k1, k2)
);
CREATE INDEX report_deep_rollup_ts ON report_deep_rollup (ts);

-- report_deep_agents: which agents saw a kept key on a day (the
-- "agents" column, a count of distinct agents over the window, which
-- per-day counts cannot give).
CREATE TABLE report_deep_agents (
    ts       BIGINT NOT NULL,
    kind     TEXT   NOT NULL,
    k1       TEXT   NOT NULL,
    k2       TEXT   NOT NULL,
    agent_id BIGINT NOT NULL,
    PRIMARY KEY (kind, k1, k2, ts, agent_id)
);
CREATE INDEX report_deep_agents_ts ON report_deep_agents (ts);
