-- PostgreSQL as the safety net: a period archived after Redis lost its data (restart
-- without persistence, FLUSHALL, failover to a lagging replica) is archived from what the
-- cold tier holds and flagged here, so that it can be found and alerted on.
-- {{schema}} is replaced by the configured schema.

ALTER TABLE {{schema}}.periods
  ADD COLUMN hot_lost boolean NOT NULL DEFAULT false;

COMMENT ON COLUMN {{schema}}.periods.hot_lost IS
  'Archived after Redis lost the period''s data: hot_members came from what Redis still had '
  '(or nothing), cold_members from the cold tier; points that lived only in Redis are missing.';
