-- Keys every process of the deployment shares, by name: `serve`'s cursor key ("cursor"),
-- which signs the page cursors it hands out so that any replica accepts another's. Made
-- (32 random bytes) by the first process that needs it, unless BOARDKEEPER_CURSOR_KEY gives
-- one; never shown. Deleting the row makes a new key for serve processes started after
-- that (each keeps the key it read): cursors signed with the old one are then refused.
-- {{schema}} is replaced by the configured schema.

CREATE TABLE {{schema}}.serve_keys (
  name        text        PRIMARY KEY,
  key         bytea       NOT NULL CHECK (length(key) >= 32),
  created_at  timestamptz NOT NULL DEFAULT now()
);
