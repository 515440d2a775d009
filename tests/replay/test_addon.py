"""The replay addon's options, as mitmdump/mitmweb users set them (mitmproxy taddons)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import exceptions, http
from mitmproxy.addons.proxyserver import Proxyserver
from mitmproxy.test import taddons, tflow

from replayproxy import _store as store
from replayproxy._core.cassette.model import EndKind
from replayproxy._engine.origin import TOKEN_HEADER, Origin
from replayproxy._mitm.addons.replayer import Replayer
from replayproxy.testing import CHAT_URL, cassette, interaction


def _context(replayer: Replayer) -> Any:
    """A mitmproxy test context with the proxyserver addon (mitmproxy 11 is untyped here)."""
    return taddons.context(Proxyserver(), replayer)  # type: ignore[no-untyped-call]


@pytest.fixture
def cassette_path(tmp_path: Path) -> Path:
    path = tmp_path / "one.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n"])))
    return path


def test_options_load_a_session_and_force_lazy_connections(cassette_path: Path) -> None:
    """Setting replayproxy_replay loads the cassette and switches to connection_strategy=lazy."""
    replayer = Replayer()
    with _context(replayer) as tctx:
        assert replayer.session is None
        tctx.configure(
            replayer,
            replayproxy_replay=str(cassette_path),
            replayproxy_speed="2.5",
            replayproxy_ignore_query=["ts"],
            replayproxy_ignore_body_field=["/stream_options"],
            replayproxy_allow_repeats=True,
        )
        assert replayer.session is not None
        assert replayer.session.speed == 2.5
        assert replayer.session.options.ignore_query == frozenset({"ts"})
        assert replayer.session.options.allow_repeats
        assert tctx.options.connection_strategy == "lazy"
        tctx.configure(replayer, replayproxy_replay=None)
        assert replayer.session is None


def test_equivalence_option_defaults_on_and_turns_off(cassette_path: Path) -> None:
    """Equivalence is on by default; replayproxy_no_equivalence gives the session exact matching."""
    replayer = Replayer()
    with _context(replayer) as tctx:
        tctx.configure(replayer, replayproxy_replay=str(cassette_path))
        assert replayer.session is not None and replayer.session.options.equivalence
        tctx.configure(replayer, replayproxy_no_equivalence=True)
        assert replayer.session is not None and not replayer.session.options.equivalence


def test_replay_server_equivalence_argument_overrides_options() -> None:
    """ReplayServer(equivalence=False) turns equivalence off, keeping the other options."""
    from replayproxy._core.matching.differences import MatchOptions
    from replayproxy._engine.server import ReplayServer

    server = ReplayServer(
        cassette(interaction([b"data: 1\n\n"])),
        options=MatchOptions(allow_repeats=True),
        equivalence=False,
    )
    assert not server.session.options.equivalence and server.session.options.allow_repeats
    assert ReplayServer(cassette(interaction([b"x"]))).session.options.equivalence


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"replayproxy_replay": "/nonexistent/x.cassette"}, "no such cassette"),
        ({"replayproxy_speed": "fast"}, "speed must be"),
        ({"replayproxy_speed": "-1"}, "speed must be"),
        ({"replayproxy_ignore_body_field": ["stream_options"]}, "must start with '/'"),
        ({"replayproxy_faults": ["nosuchfault"]}, "nosuchfault"),
    ],
)
def test_bad_options_are_one_line_option_errors(
    cassette_path: Path, options: dict[str, object], message: str
) -> None:
    """A bad cassette, speed, pointer or fault spec is an OptionsError naming the problem."""
    replayer = Replayer()
    with _context(replayer) as tctx:
        settings = {"replayproxy_replay": str(cassette_path), **options}
        with pytest.raises(exceptions.OptionsError, match=message) as err:
            tctx.configure(replayer, **settings)
        assert "\n" not in str(err.value)


def test_corrupt_cassette_is_an_option_error(tmp_path: Path) -> None:
    """A corrupt cassette file is refused with a one-line OptionsError that names it."""
    bad = tmp_path / "bad.cassette"
    bad.write_bytes(b"not a cassette at all")
    replayer = Replayer()
    with (
        _context(replayer) as tctx,
        pytest.raises(exceptions.OptionsError, match=r"bad\.cassette"),
    ):
        tctx.configure(replayer, replayproxy_replay=str(bad))


def test_requests_are_refused_while_the_origin_is_not_running(cassette_path: Path) -> None:
    """Before the origin runs, a request is answered 503 locally, never sent upstream."""
    from mitmproxy.test import tflow

    replayer = Replayer()
    with _context(replayer) as tctx:
        tctx.configure(replayer, replayproxy_replay=str(cassette_path))
        flow = tflow.tflow()
        asyncio.run(replayer.request(flow))
        assert flow.response is not None and flow.response.status_code == 503
        assert flow.request.host == "address"  # not rewritten: nothing to connect to


def _flows_for(replayer: Replayer, ends: dict[bytes, EndKind]) -> dict[bytes, http.HTTPFlow]:
    """Run ``request`` for one POST per body; the origin is registered but never started."""
    replayer.origin = Origin()
    flows = {}
    for body in ends:
        flow = tflow.tflow(req=http.Request.make("POST", CHAT_URL, body))
        asyncio.run(replayer.request(flow))
        flows[body] = flow
    return flows


def test_only_reset_schedules_are_marked_for_a_client_reset(tmp_path: Path) -> None:
    """request() marks a flow for a client RST only when its schedule finishes with RESET."""
    ends = {
        b'{"n":0}': EndKind.COMPLETE,
        b'{"n":1}': EndKind.RESET,
        b'{"n":2}': EndKind.INCOMPLETE,
        b'{"n":3}': EndKind.HANG,
    }
    path = tmp_path / "ends.cassette"
    store.save(
        path, cassette(*(interaction([b"data: 1\n\n"], body=b, end=e) for b, e in ends.items()))
    )
    replayer = Replayer()
    with _context(replayer) as tctx:
        tctx.configure(replayer, replayproxy_replay=str(path), replayproxy_faults=[])
        flows = _flows_for(replayer, ends)
    marked = {body: flow.metadata["replayproxy_replay"]["reset"] for body, flow in flows.items()}
    assert marked == {body: end is EndKind.RESET for body, end in ends.items()}
    # A reset fault on a complete recording is a reset schedule too.
    replayer = Replayer()
    with _context(replayer) as tctx:
        tctx.configure(replayer, replayproxy_replay=str(path), replayproxy_faults=["reset:bytes=3"])
        flow = _flows_for(replayer, {b'{"n":0}': EndKind.COMPLETE})[b'{"n":0}']
    assert flow.metadata["replayproxy_replay"]["reset"] is True


def test_reset_without_the_internals_falls_back_with_a_debug_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """If mitmproxy's connection table lacks the client, error() logs at debug and restores."""
    path = tmp_path / "reset.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n"], end=EndKind.RESET)))
    replayer = Replayer()
    caplog.set_level(logging.DEBUG, logger="replayproxy._mitm.addons.replayer")
    with _context(replayer) as tctx:
        tctx.configure(replayer, replayproxy_replay=str(path))
        flow = _flows_for(replayer, {b'{"model":"m","stream":true}': EndKind.RESET})
        (only,) = flow.values()
        assert only.request.host == "127.0.0.1"  # rewritten to the origin
        asyncio.run(replayer.error(only))
    assert "cannot reset the client connection (KeyError" in caplog.text
    assert only.request.host == "api.openai.invalid"  # shown as the client sent it
    assert TOKEN_HEADER not in only.request.headers
