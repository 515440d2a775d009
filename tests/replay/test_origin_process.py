"""The CLI's replay origin in a child process (engine/origin_process): it lives and dies with
the proxy, a dead or failing child is an explained, counted error that never reaches the
network, and what later addons see of a flow is the request the client sent.

The whole proxy suite also runs against this path (``forward+process`` in conftest.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replayproxy import _store as store
from replayproxy._core.schedule import codec as schedule_wire
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write
from replayproxy._engine import origin as origin_module
from replayproxy._engine.failsafe import ERROR_HEADER
from replayproxy._engine.origin import FAILURE_HEADER, PACKED_HEADER, Origin
from replayproxy._mitm.addons._handoff import waits
from replayproxy.testing import CountingUpstream, cassette, interaction
from tests.replay.conftest import ReplayTarget
from tests.replay.test_origin_clock import plain_exchange

REPLAYPROXY = [sys.executable, "-c", "from replayproxy._cli import main; main()"]
ANTHROPIC = Path(__file__).resolve().parents[2] / "cassettes" / "anthropic-text.cassette"
PATH = "/v1/chat/completions"
BODY = b'{"model":"m","stream":true}'


def children(pid: int) -> list[int]:
    """PIDs of ``pid``'s child processes (Linux /proc)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` ends (or turns zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


class Cli:
    """``replayproxy replay CASSETTE --record-mode new_episodes`` in forward mode, as a user
    starts it: mitmproxy serves (it may record), with the origin child for timed replays. (A
    replay that never records is the engine's alone, with no child.)"""

    def __init__(self, path: Path) -> None:
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        self.proc = subprocess.Popen(
            [
                *REPLAYPROXY,
                "replay",
                str(path),
                "--listen",
                "127.0.0.1:0",
                "--allow-repeats",
                "--record-mode",
                "new_episodes",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert self.proc.stdout is not None
            line = self.proc.stdout.readline()
            assert line.startswith("listening on http://127.0.0.1:"), line
            self.url = line.split()[-1]
            kids = children(self.proc.pid)
            assert len(kids) == 1, kids
            self.origin_pid = kids[0]
        except BaseException:
            self.kill()  # a failed start must not leave the proxy running
            raise

    def post(self, url: str) -> httpx.Response:
        with httpx.Client(proxy=self.url, timeout=10) as c:
            return c.post(url, content=BODY)

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def cli(tmp_path: Path, counter: CountingUpstream) -> Iterator[Cli]:
    """The CLI replaying one stream recorded from the counting host (plain HTTP)."""
    path = tmp_path / "c.cassette"
    url = f"http://127.0.0.1:{counter.port}{PATH}"
    store.save(path, cassette(interaction([b"data: 1\n\n", b"data: 2\n\n"], url=url)))
    c = Cli(path)
    try:
        yield c
    finally:
        c.kill()
    assert counter.connections == 0, "replay connected upstream"


def test_the_origin_runs_in_a_child_that_stops_with_the_proxy(
    cli: Cli, counter: CountingUpstream
) -> None:
    """Forward replay serves through its origin child process; Ctrl-C stops both, cleanly."""
    assert "replayproxy._engine.origin_process" in cmdline(cli.origin_pid)
    r = cli.post(f"http://127.0.0.1:{counter.port}{PATH}")
    assert (r.status_code, r.content) == (200, b"data: 1\n\ndata: 2\n\n")
    status, err = cli.stop()
    assert status == 0, err
    assert "1 interaction served" in err
    assert "Traceback" not in err  # the child ignores the terminal's SIGINT
    assert gone(cli.origin_pid)


def test_a_killed_proxy_takes_its_origin_child_with_it(cli: Cli) -> None:
    """SIGKILL on the proxy leaves no orphan: the child sees its stdin close and exits."""
    cli.proc.kill()
    cli.proc.wait()
    assert gone(cli.origin_pid)


def test_a_dead_origin_child_is_an_explained_counted_error(
    cli: Cli, counter: CountingUpstream
) -> None:
    """With the child gone, a request gets the explained 500 naming why, is counted as a
    replay error (the run fails) and reaches nothing (the counting host sees no connection)."""
    os.kill(cli.origin_pid, signal.SIGKILL)
    assert gone(cli.origin_pid)
    r = cli.post(f"http://127.0.0.1:{counter.port}{PATH}")
    assert r.status_code == 500
    assert r.headers[ERROR_HEADER] == "1"
    assert "the replay origin process exited" in r.text
    assert "not sent anywhere" in r.text
    _, err = cli.stop()  # serving until Ctrl-C exits 0; with -- COMMAND the error fails it
    assert "1 replay error" in err, err
    assert "the replay origin process exited" in err


def test_a_failure_in_the_origin_child_is_counted_and_explained(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """A schedule the child cannot run (here: a secret it does not know) comes back as the
    explained 500; the proxy counts it and removes the child's private header."""
    process = getattr(replay_proxy.replayer, "process", None)
    if process is None:
        pytest.skip("the in-process origin has no child")
    session = replay_proxy.serve(cassette(interaction([b"data: 1\n\n"])), speed=1)
    secret, process.secret = process.secret, "not-the-secret"
    try:
        r = httpx.post(replay_proxy.base_url + PATH, content=BODY, timeout=5)
    finally:
        process.secret = secret
    assert r.status_code == 500
    assert r.headers[ERROR_HEADER] == "1"
    assert FAILURE_HEADER not in r.headers
    assert "wrong secret" in r.text
    assert session.summary().errors == 1


def test_later_addons_see_the_body_the_client_sent(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """The schedule rode to the child in the request body; the flow shows the client's body
    and content-length again once the exchange is over."""
    if not replay_proxy.mitmproxy:
        pytest.skip("the engine alone: no addons, no hand-off")
    replay_proxy.serve(cassette(interaction([b"data: 1\n\n"])), speed=1)
    r = httpx.post(replay_proxy.base_url + PATH, content=BODY, timeout=5)
    assert (r.status_code, r.content) == (200, b"data: 1\n\n")
    assert replay_proxy.probe.bodies[-1] == (BODY, [str(len(BODY))])
    assert not replay_proxy.probe.seen[-1][2]  # no private header left


@pytest.mark.parametrize(
    ("head_ns", "write_ns", "finish_ns", "timed"),
    [(0, 0, 0, False), (1, 0, 1, True), (0, 1, 1, True), (0, 0, 1, True), (None, 0, 0, False)],
    ids=["instant", "head waits", "a write waits", "only the end waits", "no head"],
)
def test_only_schedules_that_wait_go_to_the_child(
    head_ns: int | None, write_ns: int, finish_ns: int, timed: bool
) -> None:
    """Timers are what the child is for: an instant schedule (--speed 0) stays in-process."""
    head = None if head_ns is None else Head(head_ns, 200, "OK", ())
    schedule = Schedule(head, (Write(write_ns, b"x"),), Finish(finish_ns, FinishKind.COMPLETE))
    assert waits(schedule) is timed


def test_an_instant_replay_does_not_use_the_child(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """At --speed 0 the in-process origin serves: a wrong child secret changes nothing."""
    process = getattr(replay_proxy.replayer, "process", None)
    if process is None:
        pytest.skip("the in-process origin has no child")
    replay_proxy.serve(cassette(interaction([b"data: 1\n\n", b"data: 2\n\n"])), speed=0)
    secret, process.secret = process.secret, "not-the-secret"
    try:
        r = httpx.post(replay_proxy.base_url + PATH, content=BODY, timeout=5)
    finally:
        process.secret = secret
    assert (r.status_code, r.content) == (200, b"data: 1\n\ndata: 2\n\n")


# -- the origin's side of the hand-off (a socketpair, virtual time) ------------------------------


def _packed_request(secret: str, body: bytes) -> bytes:
    return b"POST /v1 HTTP/1.1\r\nhost: x\r\n%s: %s\r\ncontent-length: %d\r\n\r\n%s" % (
        PACKED_HEADER.encode(),
        secret.encode(),
        len(body),
        body,
    )


def test_the_origin_runs_a_packed_schedule_only_with_its_secret() -> None:
    """With its secret the packed schedule is served; with another, or to an origin that has
    none, it is not (an explained, reportable 500; a plain one)."""
    sched = Schedule(Head(0, 200, "OK", ()), (Write(0, b"hi"),), Finish(0, FinishKind.COMPLETE))
    body = schedule_wire.pack(sched, "POST", None)
    served = plain_exchange(Origin(secret="s3"), _packed_request("s3", body), chunked=True)
    assert served.startswith(b"HTTP/1.1 200 OK\r\n") and served.endswith(b"2\r\nhi\r\n0\r\n\r\n")
    wrong = plain_exchange(Origin(secret="s3"), _packed_request("s4", body))
    assert wrong.startswith(b"HTTP/1.1 500 ")
    assert b"\r\nx-replayproxy-failure: a packed schedule with the wrong secret\r\n" in wrong
    nobody = plain_exchange(Origin(), _packed_request("s3", body))
    assert nobody.startswith(b"HTTP/1.1 500 ") and nobody.endswith(b"no replay session\n")
    assert FAILURE_HEADER.encode() not in nobody


def test_the_origin_process_keeps_no_framed_schedules() -> None:
    """Each packed schedule is a new object that no later request brings again: the origin
    with a secret frames it, serves it and keeps nothing (the child grew by ~30 MiB per 400
    streams keeping them); the in-process origin still caches the schedules it is given."""
    sched = Schedule(Head(0, 200, "OK", ()), (Write(0, b"hi"),), Finish(0, FinishKind.COMPLETE))
    body = schedule_wire.pack(sched, "POST", None)
    child = Origin(secret="s5")
    for _ in range(3):
        served = plain_exchange(child, _packed_request("s5", body), chunked=True)
        assert served.endswith(b"2\r\nhi\r\n0\r\n\r\n")
    assert len(child._writes) == 0 and child._writes.size == 0
    assert Origin()._writes.max_bytes > 0


def test_a_failure_summary_is_a_printable_header_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the exception says (NUL, DEL, non-ASCII), the summary header stays one line of
    printable ASCII, so mitmproxy relays the explained 500 instead of rejecting its head."""

    def broken(*_: object) -> object:
        raise ValueError("bad\x00byte \x7f é")

    monkeypatch.setattr(origin_module, "_compiled", broken)
    sched = Schedule(Head(0, 200, "OK", ()), (), Finish(0, FinishKind.COMPLETE))
    got = plain_exchange(
        Origin(secret="s"), _packed_request("s", schedule_wire.pack(sched, "GET", None))
    )
    value = got.split(b"\r\nx-replayproxy-failure: ", 1)[1].split(b"\r\n", 1)[0]
    assert value == b"ValueError: bad?byte ? ??"


def test_an_origin_child_that_cannot_start_stops_the_run_with_one_line() -> None:
    """If the child dies before listening, replay does not start: exit 2, one line naming it
    (after whatever the child printed), and the command is never run."""
    patched = (
        "import sys\n"
        "from replayproxy._engine import origin_process\n"
        "origin_process._BOOT = 'raise SystemExit(3)'\n"
        "from replayproxy._cli import main\n"
        "main()\n"
    )
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    done = subprocess.run(
        [sys.executable, "-c", patched, "replay", str(ANTHROPIC), "--listen", "127.0.0.1:0",
         "--record-mode", "new_episodes", "--", sys.executable, "-c", "print('the command ran')"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "the command ran" not in done.stdout
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: "), done.stderr
    assert "the replay origin process did not start (status 3)" in lines[-1]
