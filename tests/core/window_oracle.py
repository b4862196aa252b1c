#!/usr/bin/env python3
"""Independent oracle for windowed periods, built on Python's zoneinfo and the calendar
rule of period_oracle.py (boundary_ms: a wall time that does not exist starts when the
clock jumps; one that exists twice at its first occurrence).

Reads lines "ZONE SPEC EPOCH_MS" on stdin, SPEC one of
    daily@HH:MM+MINUTES       a daily period's window: from HH:MM local, MINUTES long
    weekly@D@HH:MM+MINUTES    a weekly one: from day D (1 = Monday .. 7) at HH:MM
    cron@HH:MM+MINUTES        a cron period firing every day at HH:MM ("M H * * *")
and prints per line "in START END" (the window containing the instant, epoch ms) or
"out NEXT" (the start of the next window).

The rule (docs, "Windows"): a window starts at its cycle's wall-clock start plus the offset
and ends MINUTES of wall-clock time later, both wall times placed by boundary_ms. A cron
period's window starts at the firing (boundary_ms of HH:MM) and is measured from the
firing's own wall time; it never runs past the next firing. Nothing is shared with the C++.
"""

import sys
from datetime import datetime, timedelta

from period_oracle import boundary_ms, wall, zone


def windows(spec, z, local):
    """The windows of the cycles around the local wall time `local`, as (start, end)."""
    kind, _, rest = spec.partition("@")
    when, _, minutes = rest.rpartition("+")
    length = timedelta(minutes=int(minutes))
    day = datetime(local.year, local.month, local.day)
    out = []
    if kind == "weekly":
        weekday, _, when = when.partition("@")
        hh, mm = map(int, when.split(":"))
        monday = day - timedelta(days=day.isoweekday() - 1)
        for k in range(-2, 3):
            s = monday + timedelta(days=7 * k + int(weekday) - 1, hours=hh, minutes=mm)
            out.append((boundary_ms(s, z), boundary_ms(s + length, z)))
        return out
    hh, mm = map(int, when.split(":"))
    for k in range(-3, 4):
        s = day + timedelta(days=k, hours=hh, minutes=mm)
        if kind == "daily":
            out.append((boundary_ms(s, z), boundary_ms(s + length, z)))
            continue
        firing = boundary_ms(s, z)
        next_firing = boundary_ms(s + timedelta(days=1), z)
        end = boundary_ms(wall(firing, z) + length, z)
        out.append((firing, min(end, next_firing)))
    return out


def main():
    out = []
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        name, spec, ms = line.split()
        z, ms = zone(name), int(ms)
        found = sorted(windows(spec, z, wall(ms, z)))
        inside = [w for w in found if w[0] <= ms < w[1]]
        if inside:
            out.append(f"in {inside[0][0]} {inside[0][1]}\n")
        else:
            out.append(f"out {min(s for s, _ in found if s > ms)}\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
