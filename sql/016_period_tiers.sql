-- Tier counts per archived period: how many of the period's history rows are in each of the
-- board's tiers, {"gold": 12, "silver": 40}, written by the archive with the rows (the counts
-- its close notice carries) and kept equal to the rows since: erasing or removing a member
-- from an archived period takes one from its tier, as it takes one from `members`. Null for a
-- period archived without tiers (or before this migration). The history API's page of
-- archived periods reads it. {{schema}} is replaced by the configured schema.

ALTER TABLE {{schema}}.periods ADD COLUMN tiers jsonb;

COMMENT ON COLUMN {{schema}}.periods.tiers IS
  'Members per tier of an archived period, as its history rows hold them now (erasures and '
  'removals taken off); null when archived without tiers.';
