-- The audit of `erase` (the right to erasure): one row per request, written when it starts
-- and completed when it ends (a row without finished_at: a request that was killed; running
-- erase again completes that row). The member id is never kept: member_hash is the hex
-- HMAC-SHA256 of it, keyed by the deployment's "erasure" key (serve_keys), so a repeated
-- request can be matched and nobody without the key can test a guess.
CREATE TABLE {{schema}}.erasures (
  id            bigserial   PRIMARY KEY,
  requested_at  timestamptz NOT NULL,
  finished_at   timestamptz,
  member_hash   text        NOT NULL,
  boards        text[],     -- the boards that held something of the member
  rows          bigint,     -- rows, entries and fields removed, all tiers
  dead_letters  bigint      -- dead-letter entries naming the member (XDEL)
);

CREATE INDEX erasures_member_hash ON {{schema}}.erasures (member_hash);
