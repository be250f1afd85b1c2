-- The process an alert event is about (rules proc and port; empty for
-- the others), so that the process detail lists its related alerts
-- (GET /api/v1/agents/{id}/processes/{name}, timeline.related_alerts).
ALTER TABLE alert_events ADD COLUMN process TEXT NOT NULL DEFAULT '';
CREATE INDEX alert_events_agent_process ON alert_events (agent_id, process);
