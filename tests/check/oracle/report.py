"""What each client did on the streams each checker rule fires on, as the Markdown that ends
``tests/check/oracle/measured.md``: ``python -m tests.check.oracle.report`` measures and prints
it; ``--write`` puts it into that section, under this Python's heading (``**Python 3.11**``: each
CI Python installs its own SDK versions, so each has its table).

One row per rule the oracle's streams exercise (errors and warnings), and one for the streams
with no finding at all; one column per client library, each cell counting its ways' outcomes
over those streams (``-`` when the library reads none of them).
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from tests.check.oracle.outcome import FAILURES
from tests.check.oracle.run import Result, client_outcomes, results

__all__ = ["DOC", "LIBRARIES", "SECTION", "heading", "render", "versions_line", "write"]

DOC = Path(__file__).resolve().parent / "measured.md"
SECTION = "## Measured client behaviour (the SDK oracle)"

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


def heading() -> str:
    return f"**Python {sys.version_info.major}.{sys.version_info.minor}**"


def write(table: str, doc: Path = DOC) -> None:
    """Put ``table`` under this Python's heading in the last section of ``doc`` (replacing
    the table there, keeping the other Pythons' tables)."""
    text = doc.read_text()
    head, _, section = text.partition(SECTION)
    block = f"{heading()}\n\n{table}"
    pattern = re.compile(re.escape(heading()) + r"\n.*?(?=\n\*\*Python |\Z)", re.S)
    if pattern.search(section):
        section = pattern.sub(lambda _: block.rstrip("\n"), section)
    else:
        section = section.rstrip("\n") + "\n\n" + block
    doc.write_text(head + SECTION + section.rstrip("\n") + "\n")


def main(argv: list[str]) -> int:
    table = render(results(client_outcomes()))
    if "--write" in argv:
        write(table)
    else:
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
