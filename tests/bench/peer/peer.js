// The benchmark's peer (tests/bench/bench.cpp runs it): the simplest thing a user would pick
// instead of boardkeeper, redis-rank (npm) on ioredis, fed the same events as
// `boardkeeper ingest --drain`.
//
//   node peer.js --modules DIR --redis URL --key BASEKEY --events FILE [--batch 500]
//
// How the events get here: bench.cpp generates each event sequence once, XADDs it to the
// stream that `ingest --drain` consumes, and writes the same sequence to FILE ("member value
// at_ms" a line). This script reads FILE into memory before its clock starts and times only
// the updates, as an application calling redis-rank at event time would run: there is no
// stream on this side (no XREADGROUP/XACK in its server time, no stream in its memory).
// Reading the stream here instead would have put the transport's cost on both sides; the
// issue's figures (the peer pays three ZINCRBY per event) are for this form.
//
// The board: a LeaderboardMatrix with the dimensions daily, weekly and monthly (periodic
// leaderboards) and one feature, "points", high-to-low with the aggregate update policy
// (ZINCRBY: our `update: increment`); no limitTopN, like the bench board's huge hot_keep.
// Updates go through matrix.update(entries) in batches of 500, one batch in flight at a time
// (the call builds one ioredis pipeline of 3 ZINCRBY per entry and awaits its replies).
//
// Semantic differences, none of which changes the boards of this benchmark:
// - redis-rank picks a batch's period from the matrix's now(), not from each event's time.
//   now() here returns the time of the batch's first event; the bench's events all fall in
//   one day, so every batch lands in the same daily/weekly/monthly keys as ours.
// - Its periods follow the process's local time: the bench runs this with TZ=UTC (checked
//   below), like the bench board (timezone: UTC). Its weeks start on Sunday (weeks since the
//   epoch: "w2969" runs from Sunday 2026-11-22) where ours are ISO weeks from Monday
//   ("2026-W48" from 2026-11-23), and its month keys count months from 0 ("y2026-m10" is
//   November). Events on a Sunday would fall in different weeks on the two sides; the bench's
//   events lie in one day, so both weekly boards hold the same events whatever the day.
// - No tie-break: equal points rank by member name (ZREVRANGE); ours rank the earliest first.
//   bench.cpp compares member counts and points, never the order of equal points.
// - No range checks, refusals, idempotency ids or cold tier.
'use strict';
const fs = require('fs');
const path = require('path');

function args() {
  const out = {batch: 500};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, '');
    if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
    out[name] = name === 'batch' ? Number(argv[i + 1]) : argv[i + 1];
  }
  for (const need of ['modules', 'redis', 'key', 'events']) {
    if (!out[need]) throw new Error(`--${need} is required`);
  }
  return out;
}

async function main() {
  const opt = args();
  // redis-rank reads the local time zone when it is loaded (its week numbers): UTC first.
  if (new Date().getTimezoneOffset() !== 0) {
    throw new Error('run with TZ=UTC: redis-rank buckets periods in local time');
  }
  const Redis = require(path.join(opt.modules, 'ioredis'));
  const {LeaderboardMatrix} = require(path.join(opt.modules, 'redis-rank'));

  // Not timed: the events into memory.
  const members = [];
  const values = [];
  const times = [];
  for (const line of fs.readFileSync(opt.events, 'utf8').split('\n')) {
    if (line === '') continue;
    const [member, value, at] = line.split(' ');
    members.push(member);
    values.push(Number(value));
    times.push(Number(at));
  }

  const client = new Redis(opt.redis, {lazyConnect: true, maxRetriesPerRequest: 0});
  await client.connect();
  let now = new Date(times.length ? times[0] : 0);
  const matrix = new LeaderboardMatrix(client, opt.key, {
    dimensions: [
      {name: 'daily', cycle: 'daily'},
      {name: 'weekly', cycle: 'weekly'},
      {name: 'monthly', cycle: 'monthly'},
    ],
    features: [{name: 'points', options: {sortPolicy: 'high-to-low', updatePolicy: 'aggregate'}}],
    now: () => now,
  });

  const t0 = process.hrtime.bigint();
  for (let start = 0; start < members.length; start += opt.batch) {
    const end = Math.min(members.length, start + opt.batch);
    const entries = [];
    for (let i = start; i < end; ++i) entries.push({id: members[i], values: {points: values[i]}});
    now = new Date(times[start]);
    await matrix.update(entries);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;

  // For bench.cpp: the time and where the boards are (it checks them against ours).
  const lines = [`events ${members.length}`, `seconds ${seconds.toFixed(6)}`];
  for (const dim of ['daily', 'weekly', 'monthly']) {
    lines.push(`key ${dim} ${matrix.getLeaderboard(dim, 'points').redisKey}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  await client.quit();
}

main().catch((e) => {
  process.stderr.write(`peer.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
