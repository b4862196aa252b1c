-- Leagues (docs/architecture.md "Leagues"): a league board ranks each period's members in
-- cohorts within their division, and its close moves the best of each cohort up and the worst
-- down. PostgreSQL holds each member's division (the truth Redis caches), each period's seats
-- (checkpointed by tick, complete before the close), and each closed cohort's final standings.
-- {{schema}} is replaced by the configured schema.

-- A member's division on a league board; a member without a row is in the board's start
-- division. `since`: the period whose close last changed it (or first wrote it).
CREATE TABLE {{schema}}.league_members (
  board     text NOT NULL,
  member    text COLLATE "C" NOT NULL,
  division  text NOT NULL,
  since     text NOT NULL,
  PRIMARY KEY (board, member)
) WITH (fillfactor = 70);  -- room on each page: a close's moves are HOT updates

-- Each league board's close count: bumped by every close (in the archive's transaction). The
-- Redis cache of league_members carries the count it was copied at, so tick knows when to
-- copy it again.
CREATE TABLE {{schema}}.league_boards (
  board    text PRIMARY KEY,
  version  bigint NOT NULL DEFAULT 0
);

-- The seats of a league period: the member's division (its index in the board's divisions
-- when seated) and its place in the order that division's seats were taken (1-based; cohort n
-- holds places (n-1)*cohort_size+1 .. n*cohort_size). Tick copies them from Redis, and all of
-- them before the period's close; after Redis lost its data, they come back from here.
CREATE TABLE {{schema}}.league_seats (
  board      text NOT NULL,
  period     text NOT NULL,
  period_id  text NOT NULL,
  member     text COLLATE "C" NOT NULL,
  division   integer NOT NULL,
  place      bigint NOT NULL,
  PRIMARY KEY (board, period, period_id, member)
);

-- Each closed cohort's final standings, written with the period's history rows: the member's
-- division and cohort, its competition rank in the cohort, and the division the close moved it
-- to (the same as `division` when it stayed).
CREATE TABLE {{schema}}.league_results (
  board          text NOT NULL,
  period         text NOT NULL,
  period_id      text NOT NULL,
  member         text COLLATE "C" NOT NULL,
  division       text NOT NULL,
  cohort         text NOT NULL,
  cohort_rank    bigint NOT NULL,
  points         bigint NOT NULL,
  next_division  text NOT NULL,
  move           text NOT NULL CHECK (move IN ('promoted', 'stayed', 'relegated')),
  PRIMARY KEY (board, period, period_id, member)
);
CREATE INDEX league_results_cohort ON {{schema}}.league_results (board, period, period_id, cohort, cohort_rank);

-- Per division of a closed league period: {"gold": {"promoted": 7, "relegated": 5, "stayed": 18}}.
ALTER TABLE {{schema}}.periods ADD COLUMN league jsonb;

-- A league period's close notice carries the same counts (null for other boards).
ALTER TABLE {{schema}}.period_closes ADD COLUMN league jsonb;

-- The history of league periods with each row's division, cohort and move.
CREATE VIEW {{schema}}.league_history AS
  SELECT h.board, h.period, h.period_id, h.period_start, h.period_end, h.rank, h.member,
         h.points, h.achieved_at, r.division, r.cohort, r.cohort_rank, r.move, r.next_division
  FROM {{schema}}.history h
  JOIN {{schema}}.league_results r USING (board, period, period_id, member);
