"""What each client did on the streams each checker rule fires on, as the Markdown that ends
``docs/checker.md``: ``python -m tests.check.oracle.report`` measures and prints it.

One row per rule the oracle's streams exercise (errors and warnings), and one for the streams
with no finding at all; one column per client library, each cell counting its ways' outcomes
over those streams (``-`` when the library reads none of them).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Iterable

from tests.check.oracle.outcome import FAILURES
from tests.check.oracle.run import Result, client_outcomes, results

__all__ = ["LIBRARIES", "render", "versions_line"]

LIBRARIES = (
    "openai-python",
    "openai-node",
    "anthropic-python",
    "anthropic-node",
    "google-genai",
    "boto3",
    "vercel-ai",
)
_NONE = "(no error or warning)"


def _library(client: str) -> str:
    return client.split(" ", 1)[0]


def versions_line(found: Iterable[Result]) -> str:
    """The client versions measured, so the table says what it is a measurement of."""
    names: set[str] = set()
    for result in found:
        names.update(o.client for o in result.outcomes)
    return "Measured with " + ", ".join(sorted(names)) + "."


def _cell(statuses: Counter[str]) -> str:
    if not statuses:
        return "-"
    order = [*FAILURES, "fine"]
    return ", ".join(f"{s} {statuses[s]}" for s in order if statuses[s])


def render(found: dict[str, Result]) -> str:
    rows: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    streams: Counter[str] = Counter()
    severity: dict[str, str] = {}
    for result in found.values():
        if not result.outcomes:
            continue  # no client reads this provider: nothing measured
        rules = {v.rule: v.severity for v in (*result.errors, *result.warnings)}
        for rule, level in rules.items():
            severity[rule] = "error" if "error" in (level, severity.get(rule)) else level
        for rule in rules or [_NONE]:
            streams[rule] += 1
            for o in result.outcomes:
                rows[rule][_library(o.client)][o.status] += 1
    head = ["rule", "streams", *LIBRARIES]
    lines = [
        versions_line(found.values()),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for rule in [*sorted(r for r in rows if r != _NONE), _NONE]:
        if rule not in rows:
            continue
        name = f"`{rule}` ({severity[rule]})" if rule != _NONE else rule
        cells = [_cell(rows[rule].get(lib, Counter())) for lib in LIBRARIES]
        lines.append("| " + " | ".join([name, str(streams[rule]), *cells]) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    sys.stdout.write(render(results(client_outcomes())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
