"""Matching under the worst request shapes: how long resolving one request takes, per shape.

For each shape a replay session is built over a cassette recorded for it, and the request is
resolved as a shell does (``ReplaySession.resolve``, plus the explained answer for a miss,
``unmatched_response``): median and max of several runs, and whether the shells resolve it on
the event loop or a worker thread (``engine.resolving.resolves_inline``). Query shapes also run
the quadratic comparison replayproxy had before issue 28, side by side in this run, with the
ratio. A script, not a test: it prints a table and exits 0 whatever the figures.

    python benchmarks/bench_match.py            # every shape, well under a minute
    python benchmarks/bench_match.py --quick    # smaller sizes

Shapes: a query of N distinct parameters (hit, every value different, one name repeated N
times), N headers, a JSON body of N members (hit, every value different), N recorded
interactions (hit on the last one, miss against all).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from replayproxy._core.cassette.model import Cassette, Request  # noqa: E402
from replayproxy._core.matching.differences import (  # noqa: E402
    MatchOptions,
    _query_differences,
    is_wildcard,
    query_pairs,
)
from replayproxy._core.matching.explanation import Difference  # noqa: E402
from replayproxy._engine.failsafe import unmatched_response  # noqa: E402
from replayproxy._engine.resolving import resolves_inline  # noqa: E402
from replayproxy._engine.session import ReplaySession  # noqa: E402
from replayproxy.testing import cassette, interaction  # noqa: E402

URL = "http://api.example.invalid/v1/things"
DEFAULTS = MatchOptions()


def _get(query: str = "", headers: tuple[tuple[bytes, bytes], ...] = ()) -> Request:
    return Request("GET", f"{URL}?{query}" if query else URL, "HTTP/1.1", headers, b"")


def _post(body: bytes) -> Request:
    return Request("POST", URL, "HTTP/1.1", ((b"content-type", b"application/json"),), body)


def _recorded(*requests: Request) -> Cassette:
    return cassette(*(interaction([b"{}"], request=r) for r in requests))


def _time(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    took = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        took.append(time.perf_counter() - started)
    return statistics.median(took), max(took)


def _resolve(recorded: Cassette, request: Request) -> Callable[[], object]:
    # Built once, as a shell does: what is timed is what each request costs.
    session = ReplaySession(recorded, speed=0, options=MatchOptions(allow_repeats=True))

    def run() -> object:
        result = session.resolve(request)
        if type(result).__name__ == "Miss":
            return unmatched_response(result)  # type: ignore[arg-type]
        return result

    return run


def _old_query_differences(recorded: str, requested: str) -> list[Difference]:
    """The comparison before issue 28: both lists scanned once per name (quadratic)."""
    options = MatchOptions()
    a, b = query_pairs(recorded, options), query_pairs(requested, options)
    redacted = {k for k, v in a if is_wildcard(v)}
    a = [(k, v) for k, v in a if k not in redacted]
    b = [(k, v) for k, v in b if k not in redacted]
    out = []
    for name in dict.fromkeys(k for k, _ in a + b):
        x = [(k, v) for k, v in a if k == name]
        y = [(k, v) for k, v in b if k == name]
        if x != y:
            out.append(Difference("query", str(x), str(y), value=quote(name)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    n = 5_000 if args.quick else 20_000
    repeat = 3 if args.quick else 5
    many = 200 if args.quick else 1_000

    query = "&".join(f"p{i}=v{i}" for i in range(n))
    other = "&".join(f"p{i}=w{i}" for i in range(n))
    one_name = "&".join(f"p=v{i}" for i in range(n))
    one_name_other = "&".join(f"p=w{i}" for i in range(n))
    headers = tuple((f"x-h{i}".encode(), b"v") for i in range(n // 10))
    doc = {f"k{i}": i for i in range(n)}
    body = json.dumps(doc).encode()
    body_other = json.dumps({k: v + 1 for k, v in doc.items()}).encode()
    big = [_get(f"id={i}") for i in range(many)]

    shapes: list[tuple[str, Cassette, Request]] = [
        (f"query {n} params, hit", _recorded(_get(query)), _get(query)),
        (f"query {n} params, all differ", _recorded(_get(query)), _get(other)),
        (f"query 1 name x {n}, all differ", _recorded(_get(one_name)), _get(one_name_other)),
        (f"{len(headers)} headers, hit", _recorded(_get()), _get(headers=headers)),
        (f"JSON body {n} members ({len(body) // 1024} KiB), hit", _recorded(_post(body)),
         _post(body)),
        (f"JSON body {n} members, all differ", _recorded(_post(body)), _post(body_other)),
        (f"{many} interactions, hit on the last", _recorded(*big), big[-1]),
        (f"{many} interactions, miss", _recorded(*big), _get("id=none")),
    ]  # fmt: skip
    print(f"{'shape':<44} {'median ms':>10} {'max ms':>9}  resolved on")
    for name, recorded, request in shapes:
        median, worst = _time(_resolve(recorded, request), repeat)
        where = "loop" if resolves_inline(ReplaySession(recorded), request) else "worker thread"
        print(f"{name:<44} {median * 1000:>10.1f} {worst * 1000:>9.1f}  {where}")

    small = 2_000 if args.quick else 5_000  # the old comparison is minutes at 20,000
    print(f"\nquery comparison alone, {small} parameters (old: pairwise per name; new: grouped)")
    print(f"{'shape':<44} {'old ms':>10} {'new ms':>9} {'ratio':>7}")
    cases = {
        "distinct names, all differ": (
            "&".join(f"p{i}=v{i}" for i in range(small)),
            "&".join(f"p{i}=w{i}" for i in range(small)),
        ),
        "one name, all differ": (
            "&".join(f"p=v{i}" for i in range(small)),
            "&".join(f"p=w{i}" for i in range(small)),
        ),
    }
    for name, (a, b) in cases.items():
        ua, ub = f"{URL}?{a}", f"{URL}?{b}"
        old, _ = _time(lambda ua=ua, ub=ub: _old_query_differences(ua, ub), 1)

        def new(ua: str = ua, ub: str = ub) -> object:
            return _query_differences(query_pairs(ua, DEFAULTS), query_pairs(ub, DEFAULTS))

        fresh, _ = _time(new, repeat)
        print(f"{name:<44} {old * 1000:>10.1f} {fresh * 1000:>9.1f} {old / fresh:>6.0f}x")


if __name__ == "__main__":
    main()
