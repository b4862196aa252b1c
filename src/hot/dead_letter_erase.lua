-- Erase: the dead letters that name a member, one chunk of a dead-letter stream per call
-- (bounded work: the caller loops with the cursor it gets back). A letter names the member
-- when its `member` field is the member (the event's own field, copied into the letter).
--
-- KEYS[1] the dead-letter stream (<stream>:dead). ARGV[1] the member, ARGV[2] the cursor:
-- "-" for the start, else the last entry id of the previous chunk (exclusive), ARGV[3] the
-- chunk's size, ARGV[4] "1" for a dry run (count only), else "0", ARGV[5] "*" for letters of
-- any board, else "": then ARGV[6...] are the boards whose letters go (a letter's `board`).
-- Returns {next cursor ("" when the stream is done), letters that name the member (deleted
-- unless a dry run)}.
local member, count, dry = ARGV[1], tonumber(ARGV[3]), ARGV[4] == '1'
local any_board, boards = ARGV[5] == '*', {}
for i = 6, #ARGV do boards[ARGV[i]] = true end
local start = ARGV[2] == '-' and '-' or ('(' .. ARGV[2])
local entries = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', count)
local found = 0
for _, e in ipairs(entries) do
  local fields, named, board = e[2], false, nil
  for i = 1, #fields, 2 do
    if fields[i] == 'member' and fields[i + 1] == member then named = true end
    if fields[i] == 'board' then board = fields[i + 1] end
  end
  if named and (any_board or (board and boards[board])) then
    found = found + 1
    if not dry then redis.call('XDEL', KEYS[1], e[1]) end
  end
end
local next = ''
if #entries == count then next = entries[#entries][1] end
return {next, found}
