"""ReplayServer as a library: the port it is asked for, a bind error in one line naming the
address and the reason, and an internal error logged where a host application sees it.
(Found untested by the mutation sample: the port dropped, the reason's wording, the log.)"""

from __future__ import annotations

import logging
import socket

import httpx
import pytest

from replayproxy.engine import server as server_mod
from replayproxy.engine.server import ReplayServer
from replayproxy.errors import ReplayProxyError
from tests.replay.helpers import cassette, interaction

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

    monkeypatch.setattr("replayproxy.engine.origin._compiled", broken)
    caplog.set_level(logging.ERROR, logger=server_mod.log.name)
    with ReplayServer(CASSETTE, speed=0) as server:
        r = httpx.post(server.url + "/v1/chat/completions", content=IT.request.body, timeout=10)
    assert r.status_code == 500
    lines = [rec.getMessage() for rec in caplog.records if rec.name == server_mod.log.name]
    assert len(lines) == 1 and lines[0].startswith("replayproxy: "), lines
    assert "planted" in lines[0]
