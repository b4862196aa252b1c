-- Which profile fields of a board are in PostgreSQL, answered from an index whatever the
-- number of profiles: tick asks it for a board whose Redis lost a hash's marker (a board
-- whose members only have names must not scan all their rows for a metadata).
-- {{schema}} is replaced by the configured schema.

CREATE INDEX profiles_with_name ON {{schema}}.profiles (board) WHERE name IS NOT NULL;
CREATE INDEX profiles_with_metadata ON {{schema}}.profiles (board) WHERE metadata IS NOT NULL;
