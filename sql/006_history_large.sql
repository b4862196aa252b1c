-- History of large periods (100,000 rows and more by default): each such period gets a
-- table of its own, filled by the archive transaction with one INSERT ... SELECT, indexed
-- after it is filled (a sorted index build instead of a million index insertions) and
-- attached as a partition of history_large, all before that transaction commits: nothing of
-- the period is visible until then. The history view and the functions read both tables;
-- retention drops a large period's table whole. {{schema}} is replaced by the configured
-- schema.

CREATE SEQUENCE {{schema}}.history_part;

CREATE TABLE {{schema}}.history_large (
  board         text        NOT NULL,
  period        text        NOT NULL,
  period_id     text        NOT NULL,
  period_start  timestamptz NOT NULL,
  period_end    timestamptz NOT NULL,
  rank          bigint      NOT NULL,
  position      bigint      NOT NULL,
  member        text        COLLATE "C" NOT NULL,
  points        bigint      NOT NULL,
  achieved_at   timestamptz,
  part          bigint      NOT NULL   -- the period's table: periods.history_part
) PARTITION BY LIST (part);

CREATE INDEX history_large_listing ON {{schema}}.history_large (board, period, period_id, position);
-- A member appears once per board period; also finds a member's rows.
CREATE UNIQUE INDEX history_large_member
  ON {{schema}}.history_large (member, board, period, period_id, part);

ALTER TABLE {{schema}}.periods
  ADD COLUMN history_part bigint;

COMMENT ON COLUMN {{schema}}.periods.history_part IS
  'Set when the period''s history rows live in a table of their own, the partition of '
  'history_large for this value (a large period); null when they live in history_rows.';

CREATE OR REPLACE VIEW {{schema}}.history AS
  SELECT board, period, period_id, period_start, period_end, rank, member, points, achieved_at
  FROM {{schema}}.history_rows
  UNION ALL
  SELECT board, period, period_id, period_start, period_end, rank, member, points, achieved_at
  FROM {{schema}}.history_large;

CREATE OR REPLACE FUNCTION {{schema}}.top(p_board text, p_period text, p_period_id text,
                                          p_n bigint DEFAULT 10)
RETURNS TABLE (rank bigint, member text, points bigint, achieved_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT h.rank, h.member, h.points, h.achieved_at
  FROM (SELECT r.position, r.rank, r.member, r.points, r.achieved_at
        FROM {{schema}}.history_rows r
        WHERE r.board = p_board AND r.period = p_period AND r.period_id = p_period_id
        UNION ALL
        SELECT l.position, l.rank, l.member, l.points, l.achieved_at
        FROM {{schema}}.history_large l
        WHERE l.board = p_board AND l.period = p_period AND l.period_id = p_period_id) h
  ORDER BY h.position
  LIMIT p_n
$$;

CREATE OR REPLACE FUNCTION {{schema}}.member_ranks(p_board text, p_period text, p_member text)
RETURNS TABLE (period_id text, period_start timestamptz, rank bigint, points bigint,
               members bigint)
LANGUAGE sql STABLE AS $$
  SELECT h.period_id, h.period_start, h.rank, h.points, p.members
  FROM {{schema}}.history h
  JOIN {{schema}}.periods p USING (board, period, period_id)
  WHERE h.board = p_board AND h.period = p_period AND h.member = p_member
  ORDER BY h.period_start DESC
$$;

CREATE OR REPLACE FUNCTION {{schema}}.best_finish(p_board text, p_period text, p_member text)
RETURNS TABLE (period_id text, period_start timestamptz, rank bigint, points bigint,
               achieved_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT h.period_id, h.period_start, h.rank, h.points, h.achieved_at
  FROM {{schema}}.history h
  WHERE h.board = p_board AND h.period = p_period AND h.member = p_member
  ORDER BY h.rank, h.period_start
  LIMIT 1
$$;
