-- History: every archived board period, final and ranked, for plain SQL. Rows live in
-- history_rows, range-partitioned by period start (one partition per month, created ahead
-- by tick) so old months can be detached or dropped; boardkeeper.history is the view of
-- the public contract. {{schema}} is replaced by the configured schema.

-- One row per board period that tick has closed: archived (its rows are in history) or
-- lost (its hot key vanished before it could be archived; see note).
CREATE TABLE {{schema}}.periods (
  board         text        NOT NULL,
  period        text        NOT NULL,
  period_id     text        NOT NULL,
  period_start  timestamptz NOT NULL,
  period_end    timestamptz NOT NULL,
  status        text        NOT NULL CHECK (status IN ('open', 'archived', 'lost')),
  members       bigint      NOT NULL DEFAULT 0,  -- history rows written
  hot_members   bigint      NOT NULL DEFAULT 0,  -- of those, from Redis
  cold_members  bigint      NOT NULL DEFAULT 0,  -- of those, from the cold tier
  archived_at   timestamptz,
  note          text,
  PRIMARY KEY (board, period, period_id)
);

CREATE TABLE {{schema}}.history_rows (
  board         text        NOT NULL,
  period        text        NOT NULL,
  period_id     text        NOT NULL,
  period_start  timestamptz NOT NULL,
  period_end    timestamptz NOT NULL,
  rank          bigint      NOT NULL,  -- competition rank: 1 + members strictly better
  position      bigint      NOT NULL,  -- 1-based place in the listing (ties by member bytes)
  member        text        COLLATE "C" NOT NULL,
  points        bigint      NOT NULL,
  achieved_at   timestamptz,           -- null on tie_break: none boards
  -- A member appears once per board period: a second archive could never add rows.
  UNIQUE (board, period, period_id, member, period_start)
) PARTITION BY RANGE (period_start);

-- Catches a period whose month has no partition yet (tick creates them ahead).
CREATE TABLE {{schema}}.history_rows_default PARTITION OF {{schema}}.history_rows DEFAULT;

CREATE INDEX history_rows_listing ON {{schema}}.history_rows (board, period, period_id, position);
CREATE INDEX history_rows_member ON {{schema}}.history_rows (member, board, period);

CREATE VIEW {{schema}}.history AS
  SELECT board, period, period_id, period_start, period_end, rank, member, points, achieved_at
  FROM {{schema}}.history_rows;

-- A board's top N of one archived period.
CREATE FUNCTION {{schema}}.top(p_board text, p_period text, p_period_id text, p_n bigint DEFAULT 10)
RETURNS TABLE (rank bigint, member text, points bigint, achieved_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT h.rank, h.member, h.points, h.achieved_at
  FROM {{schema}}.history_rows h
  WHERE h.board = p_board AND h.period = p_period AND h.period_id = p_period_id
  ORDER BY h.position
  LIMIT p_n
$$;

-- One member's finish in every archived period of a board, newest first, with how many
-- members that period had.
CREATE FUNCTION {{schema}}.member_ranks(p_board text, p_period text, p_member text)
RETURNS TABLE (period_id text, period_start timestamptz, rank bigint, points bigint,
               members bigint)
LANGUAGE sql STABLE AS $$
  SELECT h.period_id, h.period_start, h.rank, h.points, p.members
  FROM {{schema}}.history_rows h
  JOIN {{schema}}.periods p USING (board, period, period_id)
  WHERE h.board = p_board AND h.period = p_period AND h.member = p_member
  ORDER BY h.period_start DESC
$$;

-- A member's best finish on a board (best rank; the earliest period among equals).
CREATE FUNCTION {{schema}}.best_finish(p_board text, p_period text, p_member text)
RETURNS TABLE (period_id text, period_start timestamptz, rank bigint, points bigint,
               achieved_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT h.period_id, h.period_start, h.rank, h.points, h.achieved_at
  FROM {{schema}}.history_rows h
  WHERE h.board = p_board AND h.period = p_period AND h.member = p_member
  ORDER BY h.rank, h.period_start
  LIMIT 1
$$;
