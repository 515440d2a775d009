"""Mutation testing of the core and the engine with mutmut: the score per module.

Not part of CI (a full run takes hours on 2 cores). Each module runs in its own scratch copy of
the repository (``--workdir``, default ``.mutation/``) with a restricted, fast test selection
(the ``TESTS`` table below), so the worktree is never modified. mutmut maps every mutant to
the tests that execute its function and runs only those.

    pip install mutmut==3.8.1
    python scripts/mutation.py _core/wire/sse.py _core/matching/matcher.py   # some modules
    python scripts/mutation.py --all                          # _core/ and _engine/
    python scripts/mutation.py --list                         # modules and their tests

Score = (killed + timed out) / (mutants - equivalent). A mutant no selected test reaches
counts as a survivor. Survivors judged equivalent (no test could tell them from the code) are
listed with the reason in ``scripts/mutation-equivalent.txt``; survivors not listed there are
written to ``WORKDIR/survivors.txt``. See docs/contributing/mutation.md.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "replayproxy"
EQUIVALENT = ROOT / "scripts" / "mutation-equivalent.txt"

_CHECK = ["tests/core/check/test_rules.py", "tests/check/test_rules_both_ways.py"]
_FAULTS = [
    "tests/core/faults/test_plan.py",
    "tests/core/faults/test_spec.py",
    "tests/core/faults/test_properties.py",
    "tests/core/faults/test_bytes.py",
    "tests/core/faults/test_websocket.py",
    "tests/core/faults/test_provider.py",
    "tests/core/faults/test_events.py",
    "tests/core/faults/test_timing.py",
    "tests/core/faults/test_errors.py",
    "tests/core/faults/test_cache.py",
    "tests/core/faults/test_split.py",
    "tests/core/faults/test_registry.py",
    "tests/core/faults/test_phases.py",
    "tests/core/websocket/test_conversation.py",
]

# Module (relative to replayproxy/) -> the tests that run against its mutants: the unit tests
# of the module, not the end-to-end ones (those would cost minutes per mutant).
TESTS: dict[str, list[str]] = {
    "_core/wire/sse.py": ["tests/core/wire/test_sse.py", "tests/core/wire/test_sse_spec_edges.py"],
    "_core/matching/matcher.py": [
        "tests/core/matching/test_matcher.py",
        "tests/core/matching/test_pointers.py",
        "tests/core/matching/test_messages.py",
    ],
    # Split out of matcher.py: the same tests reach it.
    "_core/matching/differences.py": [
        "tests/core/matching/test_matcher.py",
        "tests/core/matching/test_pointers.py",
        "tests/core/matching/test_messages.py",
    ],
    # Split out of matching.py: the same tests reach it.
    "_core/json/pointer.py": [
        "tests/core/matching/test_matcher.py",
        "tests/core/matching/test_pointers.py",
        "tests/reliability/test_secrets.py",
    ],
    "_core/schedule/model.py": ["tests/core/schedule/test_model.py", *_FAULTS],
    "_core/schedule/codec.py": ["tests/core/schedule/test_codec.py"],
    "_core/cassette/codec.py": [
        "tests/core/cassette/test_codec.py",
        "tests/core/cassette/test_codec_versions.py",
        "tests/core/cassette/test_codec_malformed.py",
    ],
    "_core/cassette/records.py": [
        "tests/core/cassette/test_records.py",
        "tests/core/cassette/test_codec.py",
        "tests/core/cassette/test_codec_versions.py",
        "tests/core/cassette/test_codec_malformed.py",
    ],
    "_core/websocket/conversation.py": [
        "tests/core/websocket/test_conversation.py",
        "tests/core/websocket/test_conversation_exact.py",
    ],
    "_core/wire/eventstream.py": [
        "tests/core/wire/test_eventstream.py",
        "tests/core/wire/test_eventstream_headers.py",
        "tests/core/wire/test_eventstream_errors.py",
    ],
    "_core/cassette/textload.py": [
        "tests/core/cassette/test_textform.py",
        "tests/core/cassette/test_textload_escapes.py",
        "tests/core/cassette/test_textload_errors.py",
        "tests/core/cassette/test_textform_exact.py",
        "tests/core/cassette/test_websocket_text.py",
    ],
    # Split out of textload.py: the same tests reach it.
    "_core/cassette/texttokens.py": [
        "tests/core/cassette/test_escape.py",
        "tests/core/cassette/test_textform.py",
        "tests/core/cassette/test_textload_escapes.py",
        "tests/core/cassette/test_textload_errors.py",
        "tests/core/cassette/test_textform_exact.py",
        "tests/core/cassette/test_websocket_text.py",
    ],
    "_core/cassette/textform.py": [
        "tests/core/cassette/test_textform.py",
        "tests/core/cassette/test_textform_exact.py",
        "tests/core/cassette/test_websocket_text.py",
    ],
    "_core/tools/edit.py": [
        "tests/core/tools/test_edit.py",
        "tests/core/tools/test_edit_redact_json.py",
        "tests/core/tools/test_edit_exact.py",
        "tests/reliability/test_unicode_digits.py",
    ],
    "_core/redaction/secrets.py": ["tests/core/redaction/test_secrets.py"],
    "_core/json/limits.py": ["tests/reliability/test_json_depth.py"],
    "_core/redaction/body_fields.py": ["tests/core/redaction/test_body_fields.py"],
    "_core/replay/checks.py": ["tests/core/replay/test_checks.py"],
    "_core/replay/shell.py": ["tests/core/replay/test_shell.py"],
    "_core/replay/resume.py": [
        "tests/core/replay/test_resume.py",
        "tests/core/replay/test_resume_exact.py",
    ],
    "_core/cassette/validate.py": ["tests/core/cassette/test_validate.py"],
    "_core/wire/error_body.py": ["tests/core/wire/test_error_body.py"],
    "_core/replay/assembly.py": ["tests/record/test_recorder_clock.py"],
    "_core/wire/events.py": ["tests/core/wire/test_events.py"],
    "_core/tools/diff.py": ["tests/core/tools/test_diff.py", "tests/core/tools/test_diff_exact.py"],
    "_core/tools/inspect.py": [
        "tests/core/tools/test_inspect.py",
        "tests/core/websocket/test_inspect.py",
        "tests/core/cassette/test_textform.py",
    ],
    "_core/websocket/inspect.py": ["tests/core/websocket/test_inspect.py"],
    "_core/cassette/websocket_text.py": ["tests/core/cassette/test_websocket_text.py"],
    "_core/tools/plot.py": ["tests/core/tools/test_plot.py", "tests/core/tools/test_plot_svg.py"],
    "_core/faults/*": _FAULTS,
    "_core/providers/*": [
        "tests/core/providers/test_detection.py",
        "tests/core/providers/test_disagreements.py",
        "tests/core/providers/test_providers.py",
    ],
    "_core/check/*": [
        *_CHECK,
        "tests/core/check/test_anthropic.py",
        "tests/core/check/test_bedrock.py",
        "tests/core/check/test_contract_grammar.py",
        "tests/core/check/test_request_options.py",
        "tests/core/check/test_gemini.py",
        "tests/core/check/test_ndjson.py",
        "tests/core/check/test_openai_chat.py",
        "tests/core/check/test_openai_responses.py",
        "tests/core/check/test_order.py",
        "tests/core/check/test_realtime.py",
        "tests/core/check/test_realtime_reports.py",
        "tests/check/test_contract.py",
        "tests/check/test_dialect.py",
        "tests/check/test_rule_reports.py",
    ],
    "_engine/http1_reader.py": ["tests/replay/test_http1_reader.py", "tests/replay/test_origin.py"],
    "_engine/origin.py": [
        "tests/replay/test_origin_clock.py",
        "tests/replay/test_http1_reader.py",
        "tests/replay/test_origin.py",
        "tests/replay/test_server.py",  # start(): the port it is given
        "tests/replay/test_origin_burst.py",  # start(): the listen backlog
        "tests/replay/test_origin_process.py",  # the packed hand-off, the failure header
    ],
    # Split out of origin.py: the same tests reach it.
    "_engine/pacing.py": [
        "tests/replay/test_origin_clock.py",
        "tests/replay/test_http1_reader.py",
        "tests/replay/test_origin.py",
        "tests/replay/test_server.py",
        "tests/replay/test_origin_burst.py",
        "tests/replay/test_origin_process.py",
    ],
    "_engine/http1_writer.py": ["tests/replay/test_http1_writer.py"],
    "_engine/session.py": ["tests/replay/test_session.py", "tests/replay/test_resolving.py"],
    "_engine/resolving.py": ["tests/replay/test_resolving.py"],
    "_engine/websocket.py": [
        "tests/replay/test_websocket_engine.py",
        "tests/replay/test_websocket_clock.py",
        "tests/core/websocket/test_conversation.py",
    ],
    "_engine/server.py": ["tests/replay/test_server.py"],
    "_engine/sockets.py": ["tests/replay/test_sockets.py"],
    "_engine/timers.py": ["tests/replay/test_timers.py"],
    "store/sink.py": ["tests/replay/test_cassette_sink.py"],
    # unmatched_response moved here from session.py: its tests came along.
    "_engine/failsafe.py": ["tests/replay/test_failsafe.py", "tests/replay/test_session.py"],
    "_engine/memory.py": ["tests/replay/test_memory.py"],
}
DEFAULT_TESTS = {"_core": ["tests/core"], "_engine": ["tests/replay/test_origin.py"]}


def modules() -> list[str]:
    """Every module of _core/ and _engine/ that has code to mutate."""
    found = []
    for area in ("_core", "_engine"):
        for path in sorted((PACKAGE / area).rglob("*.py")):
            if "def " not in path.read_text():
                continue  # nothing mutmut mutates (it mutates inside functions)
            found.append(path.relative_to(PACKAGE).as_posix())
    return found


def groups() -> list[str]:
    """What --all runs: each module, but a ``dir/*`` of the TESTS table as one mutmut run."""
    globs = [p for p in TESTS if p.endswith("/*")]
    out = [m for m in modules() if not any(m.startswith(g[:-1]) for g in globs)]
    return out + globs


def tests_for(module: str) -> list[str]:
    if module in TESTS:
        return TESTS[module]
    for pattern, tests in TESTS.items():
        if pattern.endswith("/*") and module.startswith(pattern[:-1]):
            return tests
    return DEFAULT_TESTS[module.split("/", 1)[0]]


@dataclass
class Result:
    module: str
    caught: int = 0  # killed, timed out or crashed
    survived: list[str] = field(default_factory=list)  # survived, no test reached it, suspicious
    equivalent: list[str] = field(default_factory=list)
    unchecked: int = 0  # the run was interrupted before it

    @property
    def total(self) -> int:
        return self.caught + len(self.survived) + len(self.equivalent)

    @property
    def score(self) -> float:
        counted = self.caught + len(self.survived)
        return 100.0 * self.caught / counted if counted else 100.0


_CAUGHT = {"killed", "timeout", "segfault", "caught by type check"}
_ALIVE = {"survived", "no tests", "suspicious"}
_NAME = re.compile(r"^(?P<module>[\w.]+?)\.x(?:_|\u01c1)")


# A killed mutant needs one failing example, not the smallest: shrinking it would cost up to
# minutes per mutant. Appended to the scratch copy's tests/conftest.py only.
_PROFILE = """

from hypothesis import Phase as _Phase
from hypothesis import settings as _settings

_settings.register_profile(
    "mutation", phases=[_Phase.explicit, _Phase.reuse, _Phase.generate], deadline=None
)
"""


def _equivalents() -> set[str]:
    if not EQUIVALENT.exists():
        return set()
    names = set()
    for line in EQUIVALENT.read_text().splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.add(name)
    return names


def _prepare(where: Path, only: list[str], tests: list[str]) -> None:
    """A scratch copy of the repository in ``where`` set up to mutate the ``only`` globs
    (under replayproxy/) and run ``tests`` against them."""
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    shutil.copytree(PACKAGE, where / "replayproxy", ignore=ignore)
    shutil.copytree(ROOT / "tests", where / "tests", ignore=ignore)
    for data in ("docs", "cassettes"):  # tests read the documented examples and the cassettes
        shutil.copytree(ROOT / data, where / data, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", where / "pyproject.toml")
    with (where / "tests" / "conftest.py").open("a") as conftest:
        conftest.write(_PROFILE)
    lines = [
        "[mutmut]",
        "source_paths = replayproxy",
        "only_mutate =",
        *(f"    replayproxy/{g}" for g in only),
        "pytest_add_cli_args_test_selection =",
        *(f"    {t}" for t in tests),
        "also_copy =",  # into mutants/, where the tests run: they read these
        "    docs",
        "    cassettes",
        "pytest_add_cli_args =",
        "    -p",
        "    no:cacheprovider",
        "    -q",
        "    --hypothesis-profile=mutation",
    ]
    (where / "setup.cfg").write_text("\n".join(lines) + "\n")


def _mutmut(where: Path, *args: str) -> None:
    """Run ``mutmut ARGS`` in ``where``, its output appended to ``where/mutmut.log``."""
    with (where / "mutmut.log").open("a") as log:
        subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=where, stdout=log, stderr=log)


def _results(where: Path, equivalent: set[str], only: set[str] | None = None) -> list[Result]:
    """The results mutmut keeps in ``where``, one Result per module (``only``: these mutants)."""
    listing = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=where,
        capture_output=True,
        text=True,
    )
    results: dict[str, Result] = {}
    for line in listing.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        m = _NAME.match(name)
        if not sep or m is None or (only is not None and name not in only):
            continue
        module = m["module"].removeprefix("replayproxy.").replace(".", "/") + ".py"
        r = results.setdefault(module, Result(module))
        if status in _CAUGHT:
            r.caught += 1
        elif status in _ALIVE:
            (r.equivalent if name in equivalent else r.survived).append(name)
        else:
            r.unchecked += 1
    return [results[k] for k in sorted(results)]


def run_group(
    group: str, workdir: Path, jobs: int, equivalent: set[str], *, run: bool = True
) -> list[Result]:
    """Run mutmut over ``group`` (a module, or ``dir/*``); one Result per module in it.
    With ``run=False``, only read the results of an earlier (maybe interrupted) run."""
    where = workdir / group.replace("/", "_").replace("*", "all").removesuffix(".py")
    if run:
        _prepare(where, [group], tests_for(group))
        _mutmut(where, "run", "--max-children", str(jobs))
    elif not (where / "mutants").is_dir():
        sys.exit(f"error: no earlier run of {group} in {where}")
    results = _results(where, equivalent)
    if not results:
        sys.exit(f"error: mutmut produced no mutants for {group}; see {where / 'mutmut.log'}")
    return results


# A mutant name no mutant has: `mutmut run` with it generates every mutant and maps the tests
# that reach each one, then stops ("nothing matches") without running any.
_NO_MUTANT = "replayproxy.x_no_such_mutant__mutmut_0"


def _generated(where: Path) -> list[str]:
    """Every mutant mutmut generated in ``where`` (from its ``.meta`` files)."""
    names: list[str] = []
    for meta in sorted((where / "mutants").rglob("*.meta")):
        names.extend(json.loads(meta.read_text())["exit_code_by_key"])
    return sorted(names)


def run_sample(
    count: int, seed: int, workdir: Path, jobs: int, equivalent: set[str], *, run: bool = True
) -> tuple[list[Result], int]:
    """Run ``count`` mutants drawn at random (``seed``) from every module of _core/ and _engine/,
    in one scratch copy; return their Results and how many mutants there are in all."""
    where = workdir / "sample"
    if run:
        tests = sorted({t for g in groups() for t in tests_for(g)})
        _prepare(where, groups(), tests)
        _mutmut(where, "run", "--max-children", str(jobs), _NO_MUTANT)
    names = _generated(where) if (where / "mutants").is_dir() else []
    if not names:
        sys.exit(f"error: mutmut generated no mutants; see {where / 'mutmut.log'}")
    chosen = random.Random(seed).sample(names, min(count, len(names)))
    if run:
        _mutmut(where, "run", "--max-children", str(jobs), *chosen)
    return _results(where, equivalent, set(chosen)), len(names)


def wilson(caught: int, counted: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion, in percent."""
    if counted == 0:
        return 0.0, 100.0
    p = caught / counted
    centre = p + z * z / (2 * counted)
    spread = z * math.sqrt(p * (1 - p) / counted + z * z / (4 * counted * counted))
    scale = 1 + z * z / counted
    return 100 * (centre - spread) / scale, 100 * (centre + spread) / scale


def _line(r: Result) -> str:
    note = f"  ({r.unchecked} not run: interrupted)" if r.unchecked else ""
    return (
        f"{r.module:32} {r.total:7} {r.caught:7} {len(r.survived):6} "
        f"{len(r.equivalent):6} {r.score:6.1f}%{note}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "modules", nargs="*", help="e.g. _core/wire/sse.py or _core/faults/* (under replayproxy/)"
    )
    parser.add_argument("--all", action="store_true", help="every module of _core/ and _engine/")
    parser.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="run N mutants drawn at random from all of _core/ and _engine/, in one scratch "
        "copy, and estimate the overall score with a 95%% confidence interval",
    )
    parser.add_argument("--seed", type=int, default=1, help="the --sample draw (default 1)")
    parser.add_argument("--list", action="store_true", help="list modules and their tests")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--workdir", type=Path, default=ROOT / ".mutation")
    parser.add_argument(
        "--summary", action="store_true", help="only score an earlier run (e.g. an interrupted one)"
    )
    args = parser.parse_args()
    if args.list:
        for module in modules():
            print(f"{module:32} {' '.join(tests_for(module))}")
        return
    if args.sample is not None and (args.all or args.modules):
        parser.error("--sample draws from all of _core/ and _engine/: name no modules")
    if args.sample is not None and args.sample < 1:
        parser.error("--sample needs a positive number of mutants")
    chosen = groups() if args.all else [m.removeprefix("replayproxy/") for m in args.modules]
    if not chosen and args.sample is None:
        parser.error("name modules (e.g. _core/wire/sse.py), or pass --all or --sample N")
    unknown = [
        m for m in chosen if not any(PACKAGE.glob(m)) or not m.startswith(("_core/", "_engine/"))
    ]
    if unknown:
        parser.error(f"no such module under replayproxy/: {', '.join(unknown)}")
    try:
        import mutmut  # noqa: F401
    except ImportError:
        sys.exit("error: mutmut is not installed here: pip install mutmut==3.8.1")
    equivalent = _equivalents()
    results: list[Result] = []
    print(f"{'module':32} {'mutants':>7} {'caught':>7} {'alive':>6} {'equiv':>6} {'score':>7}")
    population = 0
    if args.sample is not None:
        results, population = run_sample(
            args.sample, args.seed, args.workdir, args.jobs, equivalent, run=not args.summary
        )
        for r in results:
            print(_line(r), flush=True)
    for group in chosen:
        for r in run_group(group, args.workdir, args.jobs, equivalent, run=not args.summary):
            results.append(r)
            print(_line(r), flush=True)
    caught = sum(r.caught for r in results)
    counted = caught + sum(len(r.survived) for r in results)
    if counted == 0:
        sys.exit(
            f"error: mutmut checked no mutant (the tests failed before it started?); "
            f"see mutmut.log under {args.workdir}"
        )
    overall = 100.0 * caught / counted
    equiv = sum(len(r.equivalent) for r in results)
    total = sum(r.total for r in results)
    print(f"{'overall':32} {total:7} {caught:7} {counted - caught:6} {equiv:6} {overall:6.1f}%")
    if population:
        low, high = wilson(caught, counted)
        print(
            f"sample of {total} of {population} mutants (seed {args.seed}): estimated score "
            f"{overall:.1f}%, 95% confidence interval {low:.1f}-{high:.1f}%"
        )
    survivors = [f"{r.module}: {name}" for r in results for name in r.survived]
    args.workdir.mkdir(parents=True, exist_ok=True)
    (args.workdir / "survivors.txt").write_text("".join(f"{s}\n" for s in survivors))
    if survivors:
        print(
            f"{len(survivors)} surviving mutants listed in {args.workdir / 'survivors.txt'}; "
            "see one with: cd WORKDIR/GROUP && mutmut show NAME"
        )


if __name__ == "__main__":
    main()
