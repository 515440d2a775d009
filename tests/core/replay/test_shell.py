"""Which shell serves (_core/replay/shell.py): a replay that never records is the engine's in
both modes; recording needs mitmproxy. choose_shell is the one decider: every front end that
starts a shell calls it, no other module picks a server from the record mode, and every shell
it can choose is a package in the import rules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from replayproxy._core.replay.record_mode import RecordMode, policy_for
from replayproxy._core.replay.shell import Shell, choose_shell
from tests.test_architecture import RULES

PACKAGE = Path(__file__).resolve().parents[3] / "replayproxy"


@pytest.mark.parametrize(
    ("mode", "exists", "shell"),
    [
        (RecordMode.NONE, True, Shell.ENGINE),
        (RecordMode.NONE, False, Shell.ENGINE),
        (RecordMode.ONCE, True, Shell.ENGINE),
        (RecordMode.ONCE, False, Shell.MITMPROXY),
        (RecordMode.NEW_EPISODES, True, Shell.MITMPROXY),
        (RecordMode.NEW_EPISODES, False, Shell.MITMPROXY),
        (RecordMode.ALL, True, Shell.MITMPROXY),
        (RecordMode.REWRITE, True, Shell.MITMPROXY),
    ],
)
def test_only_sessions_that_record_run_in_mitmproxy(
    mode: RecordMode, exists: bool, shell: Shell
) -> None:
    """Forwarding and recording need mitmproxy; replay alone (base URL or forward) does not."""
    assert choose_shell(policy_for(mode, exists)) is shell


def test_every_shell_is_reachable_and_a_layer() -> None:
    """Each shell is chosen for some record mode, and is a package of replayproxy with a row of
    its own in docs/explanations/architecture.md's import rules."""
    chosen = {choose_shell(policy_for(m, e)) for m in RecordMode for e in (True, False)}
    assert chosen == set(Shell)
    for shell in Shell:
        assert (PACKAGE / shell.value / "__init__.py").exists(), shell
        assert shell.value in RULES, f"{shell.value} has no row in the import rules"


# -- one decider --------------------------------------------------------------------------------

# What starts a shell: the mitmproxy stack, the engine's server, a host pool's servers.
_STARTERS = frozenset({"build_stack", "for_session", "EngineHost", "MitmHost", "mitm", "engine"})
# Modules that read a policy's `records` for something other than picking a server, and why.
_OTHER_READERS = {
    "_mitm/stack.py": "inside the mitmproxy shell: whether it adds the recorder addon",
    "pytest_plugin/plugin.py": "the network block is for sessions that never forward",
    "pytest_plugin/_matrix.py": "the fault matrix adds a [record] item before its cells",
}
# The decider's own package (record modes and policies live there), and the shells themselves.
_DECIDER = "_core/replay/"
_SKIP = (_DECIDER, "_engine/", "_mitm/")


def _calls(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return out


def _reads_records(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "records" for n in ast.walk(tree))


def shell_choices(tree: ast.AST, rel: str) -> list[str]:
    """Why the module ``rel`` decides a shell on its own (empty: it does not)."""
    found = []
    calls = _calls(tree)
    if not rel.startswith(_DECIDER) and rel not in _OTHER_READERS and _reads_records(tree):
        found.append("reads a policy's records itself")
    if not rel.startswith(_SKIP) and calls & _STARTERS and "choose_shell" not in calls:
        found.append(f"starts a shell ({sorted(calls & _STARTERS)}) without choose_shell")
    defines = any(
        isinstance(node, ast.FunctionDef) and node.name == "choose_shell" for node in ast.walk(tree)
    )
    if defines and rel != "_core/replay/shell.py":
        found.append("defines a choose_shell of its own")
    return found


def test_choose_shell_is_the_one_decider() -> None:
    """No module picks a server from the record mode itself: those that start a shell call
    choose_shell, and only the listed readers (each still one) look at a policy's records."""
    found, readers = {}, set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if problems := shell_choices(tree, rel):
            found[rel] = problems
        if _reads_records(tree):
            readers.add(rel)
    assert found == {}
    assert set(_OTHER_READERS) <= readers  # a reader gone: drop its entry


def _members(tree: ast.AST) -> set[str]:
    return {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "Shell"
    }


def test_the_front_ends_call_the_decider_and_start_every_shell() -> None:
    """The CLI's replay, use_cassette() (the pytest plugin's too) and its hosts call
    choose_shell; the two that start servers name every shell and end in assert_never, so mypy
    names them when a shell is added and not started."""
    for rel in ("_cli/replay.py", "_harness/context.py", "_harness/hosts.py"):
        assert "choose_shell" in _calls(ast.parse((PACKAGE / rel).read_text())), rel
    for rel in ("_cli/replay.py", "_harness/context.py"):
        tree = ast.parse((PACKAGE / rel).read_text())
        assert _members(tree) == {s.name for s in Shell}, rel
        assert "assert_never" in _calls(tree), rel


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("if session.policy.records:\n    build_stack(s)", "reads a policy's records itself"),
        ("server = ReplayServer.for_session(s)", "starts a shell (['for_session'])"),
        ("def choose_shell(policy): pass", "defines a choose_shell of its own"),
    ],
)
def test_the_scan_finds_a_second_decider(source: str, problem: str) -> None:
    """A module branching on records, starting a server without the decider, or deciding with a
    function of its own is found."""
    problems = shell_choices(ast.parse(source), "_cli/new.py")
    assert any(p.startswith(problem) for p in problems), problems
