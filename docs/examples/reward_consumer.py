#!/usr/bin/env python3
# The reward consumer the README shows: pays each tier of every closed period once, crash or not.
import os
from contextlib import suppress

import psycopg2
import redis

PRIZES = {"champion": 1000, "gold": 300, "silver": 50}  # gems per tier; other tiers: none
STREAM, GROUP, ME = "lb:closes", "rewards", "payer-1"  # ME: the same name after a restart
r = redis.Redis.from_url(os.environ["REDIS_URL"], decode_responses=True)
db = psycopg2.connect(os.environ["DATABASE_URL"])  # boardkeeper's schema first on its search_path
with db, db.cursor() as c:
    c.execute("CREATE TABLE IF NOT EXISTS ledger (entry_id text, member text, tier text,"
              " gems int, PRIMARY KEY (entry_id, member))")
with suppress(redis.exceptions.ResponseError):  # BUSYGROUP: it exists (at 0: also re-fed entries)
    r.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
since = "0"  # first the entries ME was given and never acknowledged, then new ones (">")
while True:
    for _, entries in r.xreadgroup(GROUP, ME, {STREAM: since}, count=10, block=5000):
        if not entries:
            since = ">"
        for entry_id, notice in entries:
            with db, db.cursor() as c:  # one transaction: the whole period or nothing
                c.execute("SELECT member, tier FROM history WHERE board = %s AND period = %s AND"
                          " period_id = %s", [notice[k] for k in ("board", "period", "period_id")])
                c.executemany("INSERT INTO ledger VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                              [(entry_id, m, t, PRIZES[t]) for m, t in c.fetchall() if t in PRIZES])
            r.xack(STREAM, GROUP, entry_id)  # only once the payment is committed
