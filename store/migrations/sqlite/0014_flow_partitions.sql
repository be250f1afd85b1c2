-- Flow tables by day (issue 16; see store/flow_days.go). SQLite has no
-- partitions: flow_minutes and flow_hours become views, the UNION ALL of
-- <table>_default and one table per UTC day (<table>_dYYYYMMDD), which the
-- hub creates as it writes each day and drops whole when the day expires,
-- rebuilding the view in the same transaction. The existing rows are kept
-- in <table>_default, which retention still purges row by row (a one-time
-- cost of at most the retention's rows); an INSERT into the view goes
-- there through the INSTEAD OF trigger. Readers query the views by the
-- tables' old names.
ALTER TABLE flow_minutes RENAME TO flow_minutes_default;
CREATE VIEW flow_minutes AS SELECT ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen FROM flow_minutes_default;
CREATE TRIGGER flow_minutes_insert INSTEAD OF INSERT ON flow_minutes BEGIN INSERT INTO flow_minutes_default (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen) VALUES (NEW.ts, NEW.exporter, NEW.src, NEW.dst, NEW.src_port, NEW.dst_port, NEW.proto, NEW.packets, NEW.octets, NEW.flows, NEW.first_seen, NEW.last_seen); END;

ALTER TABLE flow_hours RENAME TO flow_hours_default;
CREATE VIEW flow_hours AS SELECT ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen FROM flow_hours_default;
CREATE TRIGGER flow_hours_insert INSTEAD OF INSERT ON flow_hours BEGIN INSERT INTO flow_hours_default (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen) VALUES (NEW.ts, NEW.exporter, NEW.src, NEW.dst, NEW.src_port, NEW.dst_port, NEW.proto, NEW.packets, NEW.octets, NEW.flows, NEW.first_seen, NEW.last_seen); END;
