#!/usr/bin/env python3
"""An independent implementation of the event-log replay (specification: Event log format, notifywatch output, Delivery semantics),
written from the specification's text in plain Python, and a random-log checker.

    reference_replay.py --binary PATH [--count N] [--seed S]

generates N random valid logs, replays each with `PATH replay FILE --json`, and
compares every subscriber's lines, in order, with this implementation. Exits 1
with the first difference (and keeps the log) when they disagree.

Numbers are exact, as in the specification: integers are Python ints (any size), and a
number that a float does not hold (past its range, or nonzero below its smallest
magnitude) is a Decimal; every number compares by exact value.
"""
import argparse
from decimal import Decimal
import json
import os
import random
import re
import subprocess
import sys
import tempfile

DEFAULT_LIMIT = 1024


def match(pattern, key):
    def rec(p, k):
        if not p:
            return not k
        if p[0] == "**":
            return rec(p[1:], k) or (bool(k) and rec(p, k[1:]))
        if not k:
            return False
        return (p[0] == "*" or p[0] == k[0]) and rec(p[1:], k[1:])
    return rec(pattern.split("/"), key.split("/"))


class Sub:
    def __init__(self, name, match_, policy, limit):
        self.name, self.match, self.policy, self.limit = name, match_, policy, limit
        self.suspended = False
        self.overflow = False
        self.held = {}        # key -> [value, count, order]   (latest/changed)
        self.held_all = []    # [(key, value)]                  (all)
        self.last = {}

    def matches(self, key):
        return any(match(p, key) for p in self.match)


def replay(records):
    out = []
    store = {}  # key -> [value, order]
    order = 0
    subs = {}

    def emit(obj):
        out.append(obj)

    def note(sub, t, key, value, coalesced, last):
        if sub.policy == "changed" and key in last and last[key] == value and type_eq(last[key], value):
            return None
        obj = {"type": "notification", "t": t, "subscriber": sub.name, "key": key,
               "value": value, "coalesced": coalesced}
        if key in last:
            obj["previous"] = last[key]
        last[key] = value
        return obj

    def current(sub):
        return [(k, v[0]) for k, v in sorted(store.items(), key=lambda kv: kv[1][1]) if sub.matches(k)]

    if not any(r["type"] == "subscribe" for r in records):
        subs["default"] = Sub("default", ["**"], "latest", DEFAULT_LIMIT)

    for r in records:
        t, typ = r["t"], r["type"]
        if typ == "event":
            order += 1
            key, value = r["key"], r["value"]
            store[key] = [value, order]
            for sub in subs.values():
                if not sub.matches(key):
                    continue
                if not sub.suspended:
                    n = note(sub, t, key, value, 1, sub.last)
                    if n:
                        emit(n)
                elif sub.overflow or sub.policy == "drop":
                    pass
                elif sub.policy == "all":
                    if len(sub.held_all) + 1 > sub.limit:
                        sub.overflow, sub.held_all = True, []
                    else:
                        sub.held_all.append((key, value))
                elif key in sub.held:
                    h = sub.held[key]
                    sub.held[key] = [value, h[1] + 1, order]
                elif len(sub.held) + 1 > sub.limit:
                    sub.overflow, sub.held = True, {}
                else:
                    sub.held[key] = [value, 1, order]
        elif typ == "subscribe":
            name = r["subscriber"]
            assert name not in subs
            sub = Sub(name, r.get("match", ["**"]), r.get("policy", "latest"), r.get("limit", DEFAULT_LIMIT))
            subs[name] = sub
            if r.get("initial") == "current":
                for k, v in current(sub):
                    n = note(sub, t, k, v, 0, sub.last)
                    if n:
                        emit(n)
        elif typ == "suspend":
            sub = subs[r.get("subscriber", "default")]
            if not sub.suspended:
                sub.suspended = True
                emit({"type": "suspended", "t": t, "subscriber": sub.name})
        elif typ == "resume":
            sub = subs[r.get("subscriber", "default")]
            if not sub.suspended:
                continue
            sub.suspended = False
            notes = []
            if sub.overflow:
                for k, v in current(sub):
                    n = note(sub, t, k, v, 0, sub.last)
                    if n:
                        notes.append(n)
                emit({"type": "resumed", "t": t, "subscriber": sub.name, "flushed": len(notes)})
                emit({"type": "resync", "t": t, "subscriber": sub.name, "reason": "limit"})
            else:
                if sub.policy == "all":
                    items = [(k, v, 1) for k, v in sub.held_all]
                else:
                    items = [(k, h[0], h[1]) for k, h in sorted(sub.held.items(), key=lambda kv: kv[1][2])]
                for k, v, c in items:
                    n = note(sub, t, k, v, c, sub.last)
                    if n:
                        notes.append(n)
                emit({"type": "resumed", "t": t, "subscriber": sub.name, "flushed": len(notes)})
            out.extend(notes)
            sub.overflow, sub.held, sub.held_all = False, {}, []
        elif typ == "unsubscribe":
            del subs[r["subscriber"]]
    return out


def parse_float(text):
    """A JSON number with a fraction or exponent: a float, or a Decimal where a float
    does not hold it (infinite, or zero while the text is not)."""
    f = float(text)
    if f in (float("inf"), float("-inf")) or (f == 0 and Decimal(text) != 0):
        return Decimal(text)
    return f


def loads(text):
    return json.loads(text, parse_float=parse_float)


def dumps(obj):
    """json.dumps, with Decimals written as JSON numbers."""
    text = json.dumps(obj, default=lambda o: f"@@decimal:{o}@@")
    return re.sub(r'"@@decimal:([^@]*)@@"', r"\1", text)


def type_eq(a, b):
    """JSON equality: numbers by exact value (bool is not a number), objects without order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float, Decimal)) and isinstance(b, (int, float, Decimal)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(type_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(type_eq(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


KEYS = ["orientation", "proximity", "light", "locale", "battery/BAT0/state", "battery/BAT0/level",
        "battery/BAT1/level", "power/AC/online", "settings/org.freedesktop.appearance/color-scheme"]
PATTERNS = [["**"], ["battery/**"], ["battery/*/level"], ["orientation", "proximity"], ["*"],
            ["**/level", "light"], ["settings/**"], ["power/*/online", "battery/BAT0/*"], []]
VALUES = [0, 1, 1.0, 0.5, 2.25, -3, "portrait", "landscape-left", "", True, False, None,
          [1, "a"], {"level": 10, "unit": "lux"}, {"unit": "lux", "level": 10.0}, {"LANG": "de_DE.UTF-8"},
          99999999999999999999, -99999999999999999999, 10 ** 20, 1e20, 2 ** 64, 2.0 ** 64, -2 ** 63,
          Decimal("1E+400"), Decimal("10E+399"), Decimal("-1E+400"), Decimal("1E-400"),
          {"n": 123456789012345678901234567890, "m": Decimal("-2.5E-999")}]


def random_log(rng):
    records = []
    t = 0.0
    names = ["app", "game", "bar", "x"]
    live = {}
    implicit = rng.random() < 0.2
    if implicit:
        live["default"] = False
    for _ in range(rng.randint(1, 60)):
        t += rng.choice([0, 0, 0.5, 1, 1.25, 3])
        tt = int(t) if t == int(t) and rng.random() < 0.7 else t
        roll = rng.random()
        if not implicit and (roll < 0.1 or not live) and len(live) < 4:
            name = rng.choice([n for n in names if n not in live])
            rec = {"t": tt, "type": "subscribe", "subscriber": name}
            if rng.random() < 0.6:
                rec["match"] = rng.choice(PATTERNS)
            if rng.random() < 0.7:
                rec["policy"] = rng.choice(["latest", "changed", "all", "drop"])
            if rng.random() < 0.4:
                rec["limit"] = rng.randint(0, 4)
            if rng.random() < 0.4:
                rec["initial"] = "current"
            live[name] = False
            records.append(rec)
        elif roll < 0.22 and live:
            name = rng.choice(sorted(live))
            rec = {"t": tt, "type": "suspend"}
            if name != "default" or rng.random() < 0.5:
                rec["subscriber"] = name
            live[name] = True
            records.append(rec)
        elif roll < 0.34 and live:
            name = rng.choice(sorted(live))
            rec = {"t": tt, "type": "resume"}
            if name != "default" or rng.random() < 0.5:
                rec["subscriber"] = name
            live[name] = False
            records.append(rec)
        elif roll < 0.37 and live and not implicit:
            name = rng.choice(sorted(live))
            del live[name]
            records.append({"t": tt, "type": "unsubscribe", "subscriber": name})
        else:
            rec = {"t": tt, "type": "event", "key": rng.choice(KEYS), "value": rng.choice(VALUES)}
            if rng.random() < 0.3:
                rec["source"] = "test"
            records.append(rec)
    # Leave most subscribers resumed at the end so the flushes are checked.
    for name, suspended in sorted(live.items()):
        if suspended and rng.random() < 0.8:
            records.append({"t": t + 1, "type": "resume", "subscriber": name})
    return records


def per_subscriber(lines):
    by = {}
    for obj in lines:
        by.setdefault(obj["subscriber"], []).append(obj)
    return by


def check(binary, records, path):
    with open(path, "w") as f:
        f.write(dumps({"format": "notifybus-log", "version": 1}) + "\n")
        for r in records:
            f.write(dumps(r) + "\n")
    result = subprocess.run([binary, "replay", path, "--json"], capture_output=True, text=True)
    if result.returncode != 0:
        return f"exit status {result.returncode}: {result.stderr.strip()}"
    got = [loads(line) for line in result.stdout.splitlines()]
    want = replay(records)
    got_by, want_by = per_subscriber(got), per_subscriber(want)
    for name in sorted(set(got_by) | set(want_by)):
        g, w = got_by.get(name, []), want_by.get(name, [])
        for i in range(max(len(g), len(w))):
            a = g[i] if i < len(g) else None
            b = w[i] if i < len(w) else None
            if a is None or b is None or not type_eq(a, b):
                return f"subscriber {name}, line {i + 1}: got {dumps(a)}, expected {dumps(b)}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="notifybus-random-logs-")
    lines = 0
    for i in range(args.count):
        records = random_log(rng)
        path = os.path.join(tmp, f"log-{i}.jsonl")
        problem = check(args.binary, records, path)
        if problem:
            print(f"{path}: {problem}")
            return 1
        lines += len(records)
        os.remove(path)
    os.rmdir(tmp)
    print(f"{args.count} random logs ({lines} records) agree with the reference replay")
    return 0


if __name__ == "__main__":
    sys.exit(main())
