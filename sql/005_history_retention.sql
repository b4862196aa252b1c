-- History retention (history.retention in the config): tick removes the history rows of
-- periods that ended longer ago than their period name's retention, a whole month partition
-- at a time when every period in it is due, row by row otherwise. The periods row stays,
-- with its counts, and records when its rows were removed.
-- {{schema}} is replaced by the configured schema.

ALTER TABLE {{schema}}.periods
  ADD COLUMN pruned_at timestamptz;

COMMENT ON COLUMN {{schema}}.periods.pruned_at IS
  'When tick removed this archived period''s history rows (history.retention); null while they '
  'are kept.';

-- Finding the periods due for pruning without reading every periods row.
CREATE INDEX periods_prunable ON {{schema}}.periods (period, period_end)
  WHERE status = 'archived' AND pruned_at IS NULL;
