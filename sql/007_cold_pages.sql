-- Counted pages of the cold tier: each open period's cold rows, in listing order (encoded,
-- then member bytes), cut into pages of about a thousand rows, with each page's row count.
-- A deep read (the row at position 999,990, a member's rank) sums the counts of the pages
-- before it and walks one page, instead of walking every index entry before it. The spill
-- keeps them exact in the transaction that writes the rows; dropping a period's cold rows
-- drops its pages. Rows written into cold_members by hand make them wrong.
-- {{schema}} is replaced by the configured schema.

CREATE TABLE {{schema}}.cold_pages (
  board      text   NOT NULL,
  period     text   NOT NULL,
  period_id  text   NOT NULL,
  -- The page's first listing key; the period's first page starts at the smallest key there
  -- is (-2^63, ''), so every row falls in the page whose key is the last at or before its own.
  encoded    bigint NOT NULL,
  member     text   COLLATE "C" NOT NULL,
  rows       bigint NOT NULL CHECK (rows >= 0),  -- cold rows from this key to the next page's
  PRIMARY KEY (board, period, period_id, encoded, member)
);

-- The pages of the cold rows spilled before this migration: one every 1,000 rows.
INSERT INTO {{schema}}.cold_pages (board, period, period_id, encoded, member, rows)
SELECT board, period, period_id,
       CASE WHEN i = 0 THEN -9223372036854775808 ELSE encoded END,
       CASE WHEN i = 0 THEN '' ELSE member END,
       coalesce(lead(i) OVER (PARTITION BY board, period, period_id ORDER BY i), total) - i
FROM (SELECT board, period, period_id, encoded, member,
             row_number() OVER w - 1 AS i,
             count(*) OVER (PARTITION BY board, period, period_id) AS total
      FROM {{schema}}.cold_members
      WINDOW w AS (PARTITION BY board, period, period_id ORDER BY encoded, member)) numbered
WHERE i % 1000 = 0;
