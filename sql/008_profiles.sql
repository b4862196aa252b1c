-- Member profiles: a display name and a small JSON object of the application's own, per
-- board member (add --name/--meta, the stream fields name/meta). They live in Redis (the
-- <prefix>:{<board>}:names and :metadata hashes) while the member is hot in some period of
-- the board; tick moves those of members hot nowhere here (so Redis memory follows the hot
-- members, not every member ever seen) and copies the rest here before it archives a period
-- of the board. Reads look here for members the Redis hashes lack. {{schema}} is replaced
-- by the configured schema.

CREATE TABLE {{schema}}.profiles (
  board       text        NOT NULL,
  member      text        COLLATE "C" NOT NULL,
  name        text,
  metadata    jsonb,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (board, member)
);

-- History rows carry the profile their member had when the period was archived.
ALTER TABLE {{schema}}.history_rows ADD COLUMN name text, ADD COLUMN metadata jsonb;
ALTER TABLE {{schema}}.history_large ADD COLUMN name text, ADD COLUMN metadata jsonb;

CREATE OR REPLACE VIEW {{schema}}.history AS
  SELECT board, period, period_id, period_start, period_end, rank, member, points, achieved_at,
         name, metadata
  FROM {{schema}}.history_rows
  UNION ALL
  SELECT board, period, period_id, period_start, period_end, rank, member, points, achieved_at,
         name, metadata
  FROM {{schema}}.history_large;
