-- The cold tier: members of open periods ranked below a board's hot buffer, spilled from
-- Redis. A row is authoritative only while its member is absent from the hot key; when a
-- member is hot too, the hot value wins everywhere.
-- {{schema}} is replaced by the configured schema (a validated plain identifier).

CREATE TABLE {{schema}}.cold_members (
  board        text   NOT NULL,
  period       text   NOT NULL,
  period_id    text   NOT NULL,
  -- "C" collation: bytewise order, the same as Redis for equal scores.
  member       text   COLLATE "C" NOT NULL,
  -- The hot score at spill time: smaller ranks higher (see docs/architecture.md, "Reading the ZSETs directly").
  encoded      bigint NOT NULL,
  points       bigint NOT NULL,
  achieved_at  timestamptz,
  -- Which spill wrote the row; a rehydrated row is deleted only if still this version.
  version      bigint NOT NULL,
  spilled_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (board, period, period_id, member)
);

-- Listing order and "how many are better" counts for one board period.
CREATE INDEX cold_members_order ON {{schema}}.cold_members (board, period, period_id, encoded, member);

CREATE SEQUENCE {{schema}}.cold_version;
