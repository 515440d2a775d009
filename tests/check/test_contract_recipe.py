"""Recipe (README, "Check your own streaming endpoint"): replay your own app's recorded stream
with a fault before the terminal event and prove your client does not treat the closed
connection as a committed turn. Real ReplayServer, real sockets, real httpx."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from replayproxy import ReplayServer
from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette
from replayproxy.checking import check_cassette, load_contract
from replayproxy.testing import interaction
from tests.check.contract_cases import EXAMPLES, sse_events

URL = "http://app.invalid/api/chat"
CONTRACT = EXAMPLES / "chat-turn.contract.toml"
# The example stream has 7 events; the 7th is `committed`: cut after the 6th.
FAULTS = ["truncate:events=6", "close:events=6", "reset:events=6"]


def app_cassette() -> Cassette:
    """The recorded example stream of docs/examples as a one-interaction cassette."""
    return Cassette((interaction(sse_events(), gap_ms=5, url=URL, body=b'{"q":"weather"}'),))


def read_turn(base_url: str) -> str:
    """A careful client: the turn is committed only when the `committed` event arrived."""
    state, event = "incomplete", None
    try:
        with httpx.stream("POST", base_url + "/api/chat", json={"q": "weather"}, timeout=5) as r:
            for line in r.iter_lines():
                if line.startswith("event:"):
                    event = line[len("event:") :].strip()
                elif line == "" and event is not None:
                    if event in ("committed", "rejected"):
                        state = event
                    event = None
    except httpx.TransportError:
        return "incomplete"
    return state


def read_turn_naively(base_url: str) -> str:
    """A buggy client: a stream that ends without an error counts as committed."""
    with httpx.stream("POST", base_url + "/api/chat", json={"q": "weather"}, timeout=5) as r:
        for _ in r.iter_lines():
            pass
    return "committed"


def test_the_recorded_turn_is_committed() -> None:
    """Without a fault both clients see the committed turn."""
    with ReplayServer(app_cassette(), speed=0) as server:
        assert read_turn(server.url) == "committed"
        assert read_turn_naively(server.url) == "committed"


@pytest.mark.parametrize("fault", FAULTS)
def test_a_stream_cut_before_the_terminal_event_is_not_committed(fault: str) -> None:
    """Cut before `committed` by truncate, close or reset, the careful client reports the turn
    as incomplete, and the contract checker flags the replayed stream (contract.terminal)."""
    with ReplayServer(app_cassette(), speed=0, faults=[fault]) as server:
        assert read_turn(server.url) == "incomplete"
    (report,) = check_cassette(app_cassette(), contract=load_contract(CONTRACT), faults=[fault])
    assert [v.rule for v in report.errors] == ["contract.terminal"]


def test_the_naive_client_is_caught_by_truncate() -> None:
    """The recipe finds the bug: on a clean end without `committed` (truncate), the naive
    client claims a committed turn."""
    with ReplayServer(app_cassette(), speed=0, faults=["truncate:events=6"]) as server:
        assert read_turn_naively(server.url) == "committed"  # the bug the recipe exposes
        assert read_turn(server.url) == "incomplete"


def test_the_docs_example_cassette_is_the_example_stream(tmp_path: Path) -> None:
    """docs/examples/chat-turn.cassette (used in the README) holds the example stream, and the
    CLI checks it against the contract: ok as recorded, exit 1 with a cut."""
    from click.testing import CliRunner

    from replayproxy._cli import cli

    shipped = store.load(EXAMPLES / "chat-turn.cassette")
    (one,) = shipped.interactions
    assert (
        b"".join(f.data for f in one.response.frames) == (EXAMPLES / "chat-turn.sse").read_bytes()
    )
    runner = CliRunner()
    args = ["check", "--contract", str(CONTRACT), str(EXAMPLES / "chat-turn.cassette")]
    ok = runner.invoke(cli, args)
    assert ok.exit_code == 0 and "contract  ok  dialect: contract chat turn" in ok.stdout
    cut = runner.invoke(cli, [*args, "--fault", "close:events=6"])
    assert cut.exit_code == 1 and "contract.terminal" in cut.stdout
