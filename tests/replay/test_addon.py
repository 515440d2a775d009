"""The replay addon's options, as mitmdump/mitmweb users set them (mitmproxy taddons)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mitmproxy import exceptions
from mitmproxy.addons.proxyserver import Proxyserver
from mitmproxy.test import taddons

from replayproxy import store
from replayproxy.addons.replayer import Replayer
from tests.replay.helpers import cassette, interaction


@pytest.fixture
def cassette_path(tmp_path: Path) -> Path:
    path = tmp_path / "one.cassette"
    store.save(path, cassette(interaction([b"data: 1\n\n"])))
    return path


def test_options_load_a_session_and_force_lazy_connections(cassette_path: Path) -> None:
    """Setting replayproxy_replay loads the cassette and switches to connection_strategy=lazy."""
    replayer = Replayer()
    with taddons.context(Proxyserver(), replayer) as tctx:
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
    with taddons.context(Proxyserver(), replayer) as tctx:
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
        taddons.context(Proxyserver(), replayer) as tctx,
        pytest.raises(exceptions.OptionsError, match=r"bad\.cassette"),
    ):
        tctx.configure(replayer, replayproxy_replay=str(bad))


def test_requests_are_refused_while_the_origin_is_not_running(cassette_path: Path) -> None:
    """Before the origin runs, a request is answered 503 locally, never sent upstream."""
    from mitmproxy.test import tflow

    replayer = Replayer()
    with taddons.context(Proxyserver(), replayer) as tctx:
        tctx.configure(replayer, replayproxy_replay=str(cassette_path))
        flow = tflow.tflow()
        replayer.request(flow)
        assert flow.response is not None and flow.response.status_code == 503
        assert flow.request.host == "address"  # not rewritten: nothing to connect to
