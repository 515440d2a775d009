"""Which cassette each test used, where a run is read: beside the test in ``pytest -v``
(``PASSED [cassette: tests/cassettes/test_x/test_y.cassette]``), and at the end of the session
a short section listing the cassettes played, written, and left with unused interactions.

Each test's use travels on its reports' ``user_properties`` (under :data:`PROPERTY`): in a
plain run and under pytest-xdist alike the controller collects them in
``pytest_runtest_logreport`` (as :mod:`.report` does for the matrix), so the section holds
every worker's cassettes.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from replayproxy.pytest_plugin._words import shown_path

if TYPE_CHECKING:
    from replayproxy._harness.context import CassetteUse

__all__ = ["PROPERTY", "CassetteRun", "configure", "record_phase"]

PROPERTY = "replayproxy_cassette"
PLUGIN_NAME = "replayproxy-cassettes"
_LOGGED = "_replayproxy_logged"


def record_phase(item: pytest.Item, report: pytest.TestReport, use: CassetteUse | None) -> None:
    """Put the test's cassette on its call report (for ``-v``) and what happened to it on
    its teardown report (for the summary)."""
    if use is None or report.when not in ("call", "teardown"):
        return
    value: dict[str, Any] = {"cassette": shown_path(use.cassette, item.config)}
    if report.when == "teardown":
        s = use.summary()
        value.update(played=s.served, written=s.new, unused=len(s.unused), test=item.nodeid)
    report.user_properties = [*report.user_properties, (PROPERTY, value)]


def _cassette(report: pytest.TestReport) -> dict[str, Any] | None:
    # A CollectReport (a module that failed to import) has no user_properties.
    for name, value in getattr(report, "user_properties", ()):
        if name == PROPERTY and isinstance(value, dict):
            return value
    return None


@dataclass(eq=False)  # a plugin: pluggy keeps plugins in sets, by identity
class CassetteRun:
    """The session's cassettes (on the controller, or the only process)."""

    uses: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per test node id: its cassette and what it played, wrote, left unused."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        value = _cassette(report)
        if value is not None and report.when == "teardown":
            self.uses[value["test"]] = value
        yield
        # Shown beside the test now; the short summary at the end asks again, and gets
        # pytest's own word there ("FAILED test_x.py::test_y - ...").
        report.__dict__[_LOGGED] = True

    def pytest_report_teststatus(
        self, report: pytest.TestReport, config: pytest.Config
    ) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        """``PASSED [cassette: PATH]`` in ``-v`` (xfail and the other phases as pytest says)."""
        value = _cassette(report)
        if value is None or report.when != "call" or hasattr(report, "wasxfail"):
            return None
        if report.__dict__.get(_LOGGED):
            return None
        if config.get_verbosity() < 1:
            return None
        outcome = report.outcome
        letter = {"passed": ".", "failed": "F", "skipped": "s"}[outcome]
        markup = {"passed": {"green": True}, "failed": {"red": True}}.get(outcome, {"yellow": True})
        return outcome, letter, (f"{outcome.upper()} [cassette: {value['cassette']}]", markup)

    def lines(self) -> list[str]:
        """The summary's lines: each cassette once, under what happened to it."""
        by: dict[str, dict[str, int]] = {}
        for value in self.uses.values():
            totals = by.setdefault(value["cassette"], {"played": 0, "written": 0, "unused": 0})
            for key in totals:
                totals[key] += value[key]
        out = []
        for key, label in (
            ("played", "played"),
            ("written", "written"),
            ("unused", "with unused interactions"),
        ):
            names = [f"{c} ({t[key]})" for c, t in sorted(by.items()) if t[key]]
            out.append(f"{len(names)} {label}" + (": " + ", ".join(names) if names else ""))
        return out

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.uses:
            return
        terminalreporter.write_sep("-", "replayproxy cassettes")
        for line in self.lines():
            terminalreporter.write_line(line)


def configure(config: pytest.Config) -> None:
    """Register the session's :class:`CassetteRun` (not on xdist workers: the controller
    gathers)."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(CassetteRun(), PLUGIN_NAME)
