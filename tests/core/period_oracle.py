#!/usr/bin/env python3
"""Independent oracle for boardkeeper's calendar periods, built on Python's zoneinfo.

Reads lines "ZONE EPOCH_MS" on stdin. For each line prints one line with, for each kind
hourly, daily, weekly, monthly, yearly in that order, the period id and its start and end
in epoch milliseconds:

    HOURLY_ID START END DAILY_ID START END WEEKLY_ID START END MONTHLY_ID START END YEARLY_ID START END

The rule (PRODUCT.md, "Periods"): a period starts at a local boundary wall time (the hour,
midnight, Monday midnight, the 1st, January 1st) and ends where the next one starts. If the
boundary wall time does not exist (DST gap) the boundary is the transition instant, the
first instant that exists after it; if it exists twice, its first occurrence.

Only datetime, zoneinfo and integer arithmetic are used; nothing is shared with the C++.
"""

import sys
from functools import lru_cache
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_zones = {}


def zone(name):
    if name not in _zones:
        _zones[name] = ZoneInfo(name)
    return _zones[name]


def to_ms(aware):
    delta = aware.astimezone(timezone.utc) - EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


def from_ms(ms):
    return EPOCH + timedelta(milliseconds=ms)


def wall(ms, z):
    """The naive local wall time of an instant."""
    return from_ms(ms).astimezone(z).replace(tzinfo=None)


@lru_cache(maxsize=None)
def boundary_ms(naive, z):
    """The instant a period starting at local wall time `naive` starts."""
    existing = []
    for fold in (0, 1):
        ms = to_ms(naive.replace(tzinfo=z, fold=fold))
        if wall(ms, z) == naive:
            existing.append(ms)
    if existing:
        return min(existing)  # first occurrence when the wall time is repeated
    # A gap: zoneinfo maps the nonexistent time with the offsets before and after the
    # transition (PEP 495), giving two instants that bracket it. Find the first instant
    # whose wall time is past `naive` by bisection over milliseconds.
    a = to_ms(naive.replace(tzinfo=z, fold=0))
    b = to_ms(naive.replace(tzinfo=z, fold=1))
    lo, hi = min(a, b), max(a, b)
    if not (wall(lo, z) < naive < wall(hi, z)):
        raise RuntimeError(f"cannot bracket gap at {naive} in {z}")
    while hi - lo > 1:  # invariant: wall(lo) < naive < wall(hi)
        mid = (lo + hi) // 2
        if wall(mid, z) > naive:
            hi = mid
        else:
            lo = mid
    return hi


def add_months(naive, n):
    months = naive.year * 12 + naive.month - 1 + n
    return naive.replace(year=months // 12, month=months % 12 + 1)


# Per kind: the boundary wall time at or before a local time, the boundary after a
# boundary, and the id of the period a boundary starts.
KINDS = [
    (
        lambda t: datetime(t.year, t.month, t.day, t.hour),
        lambda b: b + timedelta(hours=1),
        lambda b: f"{b:%Y-%m-%d}T{b.hour:02d}",
    ),
    (
        lambda t: datetime(t.year, t.month, t.day),
        lambda b: b + timedelta(days=1),
        lambda b: f"{b:%Y-%m-%d}",
    ),
    (
        lambda t: datetime(t.year, t.month, t.day) - timedelta(days=t.isoweekday() - 1),
        lambda b: b + timedelta(days=7),
        lambda b: "{:04d}-W{:02d}".format(*b.isocalendar()[:2]),
    ),
    (
        lambda t: datetime(t.year, t.month, 1),
        lambda b: add_months(b, 1),
        lambda b: f"{b.year:04d}-{b.month:02d}",
    ),
    (
        lambda t: datetime(t.year, 1, 1),
        lambda b: b.replace(year=b.year + 1),
        lambda b: f"{b.year:04d}",
    ),
]


def periods(zone_name, ms):
    """Periods run from one boundary to the next: [boundary_ms(b), boundary_ms(next(b))).
    The period of an instant is the one whose bounds contain it. That is usually the one
    its wall time names, but after a fall-back that repeats a boundary's wall time together
    with some wall times before it (Pacific/Chatham repeats 02:45-03:45), the second
    02:45-02:59 lies after the first 03:00 and so in hour 03."""
    z = zone(zone_name)
    local = wall(ms, z)
    fields = []
    for floor, following, label in KINDS:
        b = floor(local)
        # The named period, else its successor or predecessor.
        found = None
        for c in (b, following(b), floor(b - timedelta(milliseconds=1))):
            s, e = boundary_ms(c, z), boundary_ms(following(c), z)
            if s <= ms < e:
                found = (label(c), s, e)
                break
        if found is None:
            raise RuntimeError(f"{zone_name} {ms}: no period contains it")
        pid, s, e = found
        fields += [pid, str(s), str(e)]
    return " ".join(fields)


def main():
    out = []
    for line in sys.stdin:
        line = line.strip()
        if line:
            name, ms = line.split()
            out.append(periods(name, int(ms)) + "\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
