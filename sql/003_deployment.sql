-- The deployment this schema belongs to. Cold and history rows are keyed by board and period
-- only, so two deployments (two Redis data sets) sharing a schema would archive and delete
-- each other's rows. The first process that uses the schema claims it with the id of its
-- Redis data set (the key <key_prefix>:deployment); a process whose Redis says otherwise is
-- refused before it writes anything. At most one row (one_row is always true).
-- {{schema}} is replaced by the configured schema.

CREATE TABLE {{schema}}.deployment (
  one_row        boolean     PRIMARY KEY DEFAULT true CHECK (one_row),
  id             text        NOT NULL,  -- the value of <key_prefix>:deployment in Redis
  key_prefix     text        NOT NULL,
  -- host:port/db or unix-socket-path/db of the owner's Redis, never a password. When its
  -- Redis loses the marker (FLUSHALL, restart without persistence), a process at this
  -- address and prefix takes the id back; to hand the schema to a Redis elsewhere, an
  -- operator updates this column.
  redis_address  text        NOT NULL,
  claimed_at     timestamptz NOT NULL DEFAULT now()
);
