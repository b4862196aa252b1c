-- Bans: members kept off a board (`ban`, service/moderation.h). PostgreSQL is the truth; Redis
-- caches them per board (<prefix>:{<board>}:bans) for the update path, and the board sync
-- rebuilds that cache after Redis lost its data. Dropping a board keeps its bans (a revived
-- board keeps its cheaters out). {{schema}} is replaced by the configured schema.

CREATE TABLE {{schema}}.bans (
  board      text        NOT NULL,
  member     text        COLLATE "C" NOT NULL,
  reason     text        NOT NULL DEFAULT '',
  banned_at  timestamptz NOT NULL,
  PRIMARY KEY (board, member)
);
