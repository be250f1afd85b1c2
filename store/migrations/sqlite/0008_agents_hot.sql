-- Every telemetry batch updates its agent's row, last_seen included. An
-- index on last_seen made each of those updates an index write too (and
-- on PostgreSQL ruled out heap-only updates); only the archive, every 10
-- minutes, reads by last_seen, and scanning the agents table is cheap.
DROP INDEX agents_last_seen;
