-- Tiers: each history row keeps the tier its member was in when the period was archived (the
-- board's `tiers:` rules, first match wins, computed by the archive's merge from the row's
-- competition rank, its points and the period's member count), so a reward paid from history
-- later does not depend on today's config. Null on boards without tiers and for members in no
-- tier. {{schema}} is replaced by the configured schema.

ALTER TABLE {{schema}}.history_rows ADD COLUMN tier text;
ALTER TABLE {{schema}}.history_large ADD COLUMN tier text;

COMMENT ON COLUMN {{schema}}.history_rows.tier IS
  'The member''s tier when the period was archived (the board''s tiers: rules); null without '
  'tiers or when no rule matched.';
COMMENT ON COLUMN {{schema}}.history_large.tier IS
  'As history_rows.tier.';

CREATE OR REPLACE VIEW {{schema}}.history AS
  SELECT board, period, period_id, period_start, period_end, rank, member, points, achieved_at,
         name, metadata, tier
  FROM {{schema}}.history_rows
  UNION ALL
  SELECT board, period, period_id, period_start, period_end, rank, member, points, achieved_at,
         name, metadata, tier
  FROM {{schema}}.history_large;
