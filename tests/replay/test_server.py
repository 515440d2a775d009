"""ReplayServer as a library: the port it is asked for, a bind error in one line naming the
address and the reason, and an internal error logged where a host application sees it.
(Found untested by the mutation sample: the port dropped, the reason's wording, the log.)"""

from __future__ import annotations

import asyncio
import logging
import socket

import httpx
import pytest

from replayproxy._engine import server as server_mod
from replayproxy._engine.server import ReplayServer
from replayproxy._errors import ReplayProxyError
from replayproxy.testing import cassette, interaction

IT = interaction([b"data: 1\n\n"])
CASSETTE = cassette(IT)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_server_listens_on_the_port_it_is_given() -> None:
    port = _free_port()
    with ReplayServer(CASSETTE, port=port, speed=0) as server:
        assert server.port == port
        assert server.url == f"http://127.0.0.1:{port}"


def test_a_taken_port_is_one_line_naming_the_address_and_the_reason() -> None:
    """As mitmproxy's bind errors read: the OS's reason in lower case, no traceback."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ReplayProxyError) as err:
            ReplayServer(CASSETTE, port=port).start()
    assert str(err.value) == f"cannot listen on 127.0.0.1:{port}: address already in use"


def test_an_internal_error_is_logged_as_well_as_answered(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure inside the engine gets the explained 500 and one error log line naming it."""

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("planted")

    monkeypatch.setattr("replayproxy._engine.origin._compiled", broken)
    caplog.set_level(logging.ERROR, logger=server_mod.log.name)
    with ReplayServer(CASSETTE, speed=0) as server:
        r = httpx.post(server.url + "/v1/chat/completions", content=IT.request.body, timeout=10)
    assert r.status_code == 500
    lines = [rec.getMessage() for rec in caplog.records if rec.name == server_mod.log.name]
    assert len(lines) == 1 and lines[0].startswith("replayproxy: "), lines
    assert "planted" in lines[0]


# -- the server's lifecycle and properties -------------------------------------------------------


def test_before_start_the_server_reports_what_it_was_asked_for() -> None:
    """Not started: not running, the host it was given, its session's (empty) summary."""
    server = ReplayServer(CASSETTE, host="::1")
    assert server.is_running is False
    assert server.host == "::1"
    assert server.summary() == server.session.summary()
    assert server.summary().served == 0
    server.stop()  # stopping a server never started does nothing


def test_wait_blocks_until_the_server_stops() -> None:
    """wait(): True at once for a server never started; while it serves, False after the
    timeout; True once stop() has ended it."""
    server = ReplayServer(CASSETTE, speed=0)
    assert server.wait(0) is True
    server.start()
    try:
        assert server.wait(0.2) is False
        assert server.is_running
    finally:
        server.stop()
    assert server.wait(5) is True


def test_url_brackets_an_ipv6_host() -> None:
    """An IPv6 address is bracketed in the URL; a name or IPv4 address is not."""
    server = ReplayServer(CASSETTE, host="::1")
    server._bound_host = "::1"
    assert server.url == f"http://[::1]:{server.port}"
    server._bound_host = "127.0.0.1"
    assert server.url == f"http://127.0.0.1:{server.port}"


def test_a_running_server_serves_and_stops() -> None:
    """start() returns once it listens (running, the bound host and port in its URL); the
    summary counts what it served; after stop() it no longer runs or listens."""
    server = ReplayServer(CASSETTE, speed=0)
    assert server.start() is server
    try:
        assert server.is_running
        assert server.host == "127.0.0.1" and server.port > 0
        r = httpx.post(server.url + "/v1/chat/completions", content=IT.request.body, timeout=10)
        assert r.text == "data: 1\n\n"
        assert server.summary().served == 1
    finally:
        server.stop()
    assert not server.is_running
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/", timeout=2)


def test_equivalence_false_overrides_the_options() -> None:
    """``equivalence=`` replaces the match options' setting, keeping the rest of them."""
    from replayproxy._core.matching.differences import MatchOptions

    options = MatchOptions(match_host=True)
    server = ReplayServer(CASSETTE, options=options, equivalence=False)
    assert server.session.options == MatchOptions(match_host=True, equivalence=False)
    assert ReplayServer(CASSETTE, equivalence=False).session.options == MatchOptions(
        equivalence=False
    )
    assert ReplayServer(CASSETTE, options=options).session.options is options


def test_use_switches_the_session_served() -> None:
    """use(): requests from then on are answered from the new session."""
    from replayproxy._engine.session import ReplaySession

    other = interaction([b"data: other\n\n"])
    with ReplayServer(CASSETTE, speed=0) as server:
        new = ReplaySession(cassette(other), speed=0)
        server.use(new)
        assert server.session is new
        r = httpx.post(server.url + "/v1/chat/completions", content=IT.request.body, timeout=10)
        assert r.text == "data: other\n\n"
        assert server.summary().served == 1 and new.summary().served == 1


def test_for_session_serves_a_session_made_elsewhere() -> None:
    """for_session(): the server answers from the given session, on the given port."""
    from replayproxy._engine.session import ReplaySession

    session = ReplaySession(CASSETTE, speed=0)
    port = _free_port()
    with ReplayServer.for_session(session, port=port) as server:
        assert server.session is session and server.port == port
        r = httpx.post(server.url + "/v1/chat/completions", content=IT.request.body, timeout=10)
        assert r.text == "data: 1\n\n"
    assert session.summary().served == 1


def test_a_server_that_does_not_start_in_time_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """start(timeout) gives up with one line when the server does not listen in time."""
    import asyncio
    import threading

    release = threading.Event()

    async def slow(self: object, host: str, port: int) -> None:
        while not release.is_set():
            await asyncio.sleep(0.01)

    monkeypatch.setattr("replayproxy._engine.origin.Origin.start", slow)
    server = ReplayServer(CASSETTE)
    with pytest.raises(ReplayProxyError) as err:
        server.start(timeout=0.25)
    assert str(err.value) == "the replay server did not start within 0.25 s"
    release.set()
    server.stop()


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (OSError(13, "Permission denied"), "cannot listen on 127.0.0.1:0: permission denied"),
        (OSError("no errno here"), "cannot listen on 127.0.0.1:0: no errno here"),
    ],
)
def test_an_os_error_while_starting_is_one_line(
    monkeypatch: pytest.MonkeyPatch, error: OSError, expected: str
) -> None:
    """An OSError from listening: one line with the OS's reason (lower case), or the error's
    own text when it has no errno."""

    async def failing(self: object, host: str, port: int) -> None:
        raise error

    monkeypatch.setattr("replayproxy._engine.origin.Origin.start", failing)
    with pytest.raises(ReplayProxyError) as err:
        ReplayServer(CASSETTE).start()
    assert str(err.value) == expected
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_another_error_while_starting_is_raised_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-OS error while starting reaches the caller unchanged; the server is not running."""
    planted = RuntimeError("planted")

    async def failing(self: object, host: str, port: int) -> None:
        raise planted

    monkeypatch.setattr("replayproxy._engine.origin.Origin.start", failing)
    server = ReplayServer(CASSETTE)
    with pytest.raises(RuntimeError) as err:
        server.start()
    assert err.value is planted
    assert not server.is_running


def test_the_default_error_handler_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    """Without on_error, a replay failure is one error log line on this module's logger."""
    from replayproxy._engine.failsafe import ReplayFailure

    caplog.set_level(logging.ERROR, logger=server_mod.log.name)
    server = ReplayServer(CASSETTE)
    assert server.session.on_error is server_mod._log_failure
    server_mod._log_failure(ReplayFailure("POST /v1/x", "KeyError: 'model'"))
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        (server_mod.log.name, logging.ERROR, "replayproxy: replay failed for POST /v1/x: "
         "KeyError: 'model'")
    ]  # fmt: skip
    handler: list[ReplayFailure] = []
    assert ReplayServer(CASSETTE, on_error=handler.append).session.on_error == handler.append


def test_the_arguments_reach_the_session() -> None:
    """speed (default 1), faults and on_miss are the session's."""
    from replayproxy._core.faults import parse
    from replayproxy._core.matching.matcher import Miss

    assert ReplayServer(CASSETTE).session.speed == 1.0
    misses: list[Miss] = []
    server = ReplayServer(CASSETTE, speed=3, faults=["jitter:ms=1"], on_miss=misses.append)
    assert (server.session.speed, server.session.faults) == (3.0, (parse("jitter:ms=1"),))
    with server:
        r = httpx.post(server.url + "/v1/other", content=b"{}", timeout=10)
    assert r.status_code == 500 and len(misses) == 1
    assert misses[0].request == "POST /v1/other"


@pytest.mark.parametrize("for_session", [False, True])
def test_requests_are_matched_as_sent_to_the_upstream(for_session: bool) -> None:
    """With ``upstream=``, requests match as if sent there (what match_host compares)."""
    from replayproxy._core.matching.differences import MatchOptions
    from replayproxy._engine.session import ReplaySession

    options = MatchOptions(match_host=True)

    def server(upstream: str | None) -> ReplayServer:
        if for_session:
            session = ReplaySession(CASSETTE, speed=0, options=options)
            return ReplayServer.for_session(session, upstream=upstream)
        return ReplayServer(CASSETTE, speed=0, options=options, upstream=upstream)

    for upstream, status in (("https://api.openai.invalid", 200), (None, 500)):
        with server(upstream) as s:
            r = httpx.post(s.url + "/v1/chat/completions", content=IT.request.body, timeout=10)
        assert r.status_code == status, upstream


def test_for_session_listens_on_a_free_loopback_port_by_default() -> None:
    """for_session() without host and port: 127.0.0.1 and a port the OS picked."""
    from replayproxy._engine.session import ReplaySession

    with ReplayServer.for_session(ReplaySession(CASSETTE)) as server:
        assert server.host == "127.0.0.1" and server.port >= 1024


def test_the_server_runs_on_a_named_daemon_thread() -> None:
    """Its thread is "replayproxy-origin" and a daemon (a server never stopped does not keep
    the interpreter from exiting)."""
    import threading

    with ReplayServer(CASSETTE) as server:
        (thread,) = [t for t in threading.enumerate() if t.name == "replayproxy-origin"]
        assert thread.daemon is True and thread is server._thread
    server.stop()  # a second stop (the loop is closed now) does nothing
    assert not thread.is_alive()


def test_stop_gives_up_waiting_after_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """stop(timeout) returns after ``timeout`` even if the server thread does not end."""
    import asyncio
    import threading
    import time

    from replayproxy._engine.origin import Origin

    release = threading.Event()
    close = Origin.close

    async def stuck(self: Origin) -> None:
        while not release.is_set():
            await asyncio.sleep(0.01)
        await close(self)

    monkeypatch.setattr(Origin, "close", stuck)
    server = ReplayServer(CASSETTE).start()
    started = time.monotonic()
    server.stop(timeout=0.3)
    took = time.monotonic() - started
    assert server._thread is not None and server._thread.is_alive()
    release.set()
    server._thread.join(10)
    assert 0.25 < took < 5


def test_a_host_name_is_reported_as_the_address_bound() -> None:
    """Asked to listen on "localhost", the server reports the address it bound (and its URL
    uses it), not the name."""
    with ReplayServer(CASSETTE, host="localhost", speed=0) as server:
        assert server.host in ("127.0.0.1", "::1")
        r = httpx.post(server.url + "/v1/chat/completions", content=IT.request.body, timeout=10)
        assert r.text == "data: 1\n\n"


def test_misses_and_explain_name_the_request_and_the_server_keyword_that_fixes_it() -> None:
    """ReplayServer has use_cassette()'s handle shape: ``misses`` and ``explain()``, whose fix
    is spelt as a ReplayServer keyword (not a CLI flag), the same text the client got."""
    with ReplayServer(CASSETTE, speed=0) as server:
        assert server.misses == [] and server.explain() == ""
        r = httpx.post(server.url + "/v1/chat/completions", content=b'{"x": 2}', timeout=10)
        assert r.status_code == 500
        assert len(server.misses) == 1
        text = server.explain()
    assert text.startswith("replayproxy: no recorded interaction matches POST /v1/chat/completions")
    assert "ReplayServer(..., " in text and "--" not in text.split("\n", 1)[1]
    assert server.misses[0].explain(server.session.words) == text
    assert text.split("\n")[0] in r.text


def test_async_with_starts_and_stops_the_server_without_blocking_the_loop() -> None:
    """``async with ReplayServer(...)`` serves an async client, and stops on exit."""

    async def main() -> tuple[httpx.Response, bool, bool]:
        async with ReplayServer(CASSETTE, speed=0) as server:
            async with httpx.AsyncClient() as client:
                url = server.url + "/v1/chat/completions"
                r = await client.post(url, content=IT.request.body, timeout=10)
            running = server.is_running
        return r, running, server.is_running

    r, running_inside, running_after = asyncio.run(main())
    assert r.status_code == 200 and r.content == b"data: 1\n\n"
    assert running_inside and not running_after
