-- Close notices: one row per archived period, written in the archive's own transaction (so a
-- period has a notice exactly when it is archived), with NOTIFY <schema>_closes '<seq>' in
-- the same transaction. tick then publishes every unpublished notice to its Redis stream as
-- the entry <seq>-1 and records published_at; docs/architecture.md ("Close notices, exactly
-- once") has the argument. {{schema}} is replaced by the configured schema.

CREATE SEQUENCE {{schema}}.period_close_seq;

CREATE TABLE {{schema}}.period_closes (
  -- Taken under a lock held until the archive commits: notices commit in seq order. Unique
  -- by the sequence; the key also names the board, as every per-board table's does (the way
  -- to a PostgreSQL distributed by board: tests/integration/schema_path_test.cpp).
  seq          bigint      NOT NULL,
  board        text        NOT NULL,
  period       text        NOT NULL,
  period_id    text        NOT NULL,
  period_start timestamptz NOT NULL,
  period_end   timestamptz NOT NULL,
  members      bigint      NOT NULL,
  -- Members per tier, {"gold": 12, ...}; {} for a board without tiers.
  tiers        jsonb       NOT NULL DEFAULT '{}',
  hot_lost     boolean     NOT NULL DEFAULT false,
  archived_at  timestamptz NOT NULL,
  -- The Redis stream the notice goes to (the board's closes_stream when archived).
  stream       text        NOT NULL,
  -- When tick saw the notice in its stream; null: still to publish.
  published_at timestamptz,
  PRIMARY KEY (seq, board)
);

COMMENT ON TABLE {{schema}}.period_closes IS
  'One notice per archived period (written in the archive''s transaction); tick publishes each '
  'to its Redis stream with the entry id <seq>-1.';

-- The publisher's walk of one stream in seq order, and its pending notices.
CREATE INDEX period_closes_stream ON {{schema}}.period_closes (stream, seq);
CREATE INDEX period_closes_pending ON {{schema}}.period_closes (stream, seq)
  WHERE published_at IS NULL;
CREATE INDEX period_closes_period ON {{schema}}.period_closes (board, period, period_id);
