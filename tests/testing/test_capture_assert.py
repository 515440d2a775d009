"""The structural assertions of a StreamCapture and check(): each passes on a well-behaved
stream and fails with a message naming the frames, times and bytes, over real loopback
sockets (a ReplayServer with faults) and httpx."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from replayproxy._core.cassette.model import EndKind
from replayproxy._engine.server import ReplayServer
from replayproxy._errors import UsageError
from replayproxy.checking import load_contract
from replayproxy.testing import (
    SSE_EVENTS,
    StreamCapture,
    capture_url,
    cassette,
    stream_interaction,
)
from replayproxy.testing._capture_assert import cut_upstream
from tests.testing.capture_servers import CHAT_JSON, CHAT_PATH, serving

EXAMPLES = Path(__file__).parents[2] / "docs" / "examples"
CONTRACT = EXAMPLES / "chat-turn.contract.toml"
TURN = (EXAMPLES / "chat-turn.sse").read_bytes()
SSE = ((b"content-type", b"text/event-stream"),)


def _capture(server: ReplayServer, path: str = CHAT_PATH, **kwargs: object) -> StreamCapture:
    body = None if kwargs.pop("empty", False) else CHAT_JSON
    cap = capture_url("POST", server.url + path, json=body, **kwargs)  # type: ignore[arg-type]
    assert cap.status == 200, cap.body  # the recorded answer, not a replay miss
    return cap


def _turn_events() -> list[bytes]:
    return [block + b"\n\n" for block in TURN.strip(b"\n").split(b"\n\n")]


# -- assert_streamed ------------------------------------------------------------------------


def test_assert_streamed_passes_on_spread_frames() -> None:
    """Four writes 40 ms apart: at least 2 frames over at least 50 ms."""
    with serving(gap_ms=40) as server:
        _capture(server).assert_streamed(min_frames=2, min_spread_ms=50)


def test_assert_streamed_names_the_frames_of_a_buffered_body() -> None:
    """coalesce (everything in one write, as a buffering middleware does): the message says
    how many frames, their sizes and arrival times."""
    with serving(faults=["coalesce"]) as server:
        cap = _capture(server)
    with pytest.raises(AssertionError) as failed:
        cap.assert_streamed()
    size = len(b"".join(SSE_EVENTS))
    message = str(failed.value)
    assert "was not streamed (fewer than 2 frames" in message
    assert re.search(rf"1 frame, {size} bytes in all: frame 0: {size} bytes at \d+\.\d ms", message)


def test_assert_streamed_min_spread_catches_a_late_burst() -> None:
    """Frames that all arrive within a few ms fail a min_spread_ms naming the spread."""
    with serving(gap_ms=0, faults=["split:bytes=20,gap=0.001"]) as server:
        cap = _capture(server)
    assert len(cap.frames) >= 2
    with pytest.raises(AssertionError, match=r"spread over \d+\.\d ms \(frame 0 to frame \d+\), "
                       r"less than 5000 ms"):  # fmt: skip
        cap.assert_streamed(min_spread_ms=5000)


# -- assert_streaming_headers ---------------------------------------------------------------


def test_assert_streaming_headers_passes_on_good_headers() -> None:
    """text/event-stream, cache-control: no-cache, x-accel-buffering: no."""
    with serving() as server:
        _capture(server).assert_streaming_headers(accel_buffering=True)


def test_assert_streaming_headers_lists_every_problem() -> None:
    """A JSON content type, no cache-control, gzip and no x-accel-buffering: four lines."""
    headers = ((b"content-type", b"application/json"), (b"content-encoding", b"gzip"))
    import gzip

    with serving([gzip.compress(b'{"a": 1}')], headers=headers) as server:
        cap = _capture(server)
    with pytest.raises(AssertionError) as failed:
        cap.assert_streaming_headers(accel_buffering=True)
    lines = str(failed.value).splitlines()
    assert lines[0].endswith(": 4 streaming header problems:")
    assert "content-type is 'application/json', not text/event-stream" in lines[1]
    assert "cache-control is missing, not no-cache" in lines[2]
    assert "content-encoding is 'gzip': a compressing middleware (GZip) buffers" in lines[3]
    assert "x-accel-buffering is missing, not 'no'" in lines[4]
    assert cap.body == b'{"a": 1}'  # frames are content-decoded, as a client reads them


def test_assert_streaming_headers_accepts_ndjson_and_directive_lists() -> None:
    """application/x-ndjson and cache-control: no-cache, no-transform are streaming headers."""
    headers = (
        (b"content-type", b"application/x-ndjson"),
        (b"cache-control", b"no-cache, no-transform"),
    )
    with serving([b"{}\n"], headers=headers) as server:
        _capture(server).assert_streaming_headers()


# -- assert_framing --------------------------------------------------------------------------


def test_assert_framing_passes_on_whole_events() -> None:
    """Every byte is inside a complete event."""
    with serving() as server:
        _capture(server).assert_framing()


def test_assert_framing_shows_the_unterminated_bytes() -> None:
    """A body cut 10 bytes into event 1: the message names the bytes, the frame and its time."""
    cut = len(SSE_EVENTS[0]) + 10
    with serving(faults=[f"close:bytes={cut}"]) as server:
        cap = _capture(server)
    with pytest.raises(AssertionError) as failed:
        cap.assert_framing()
    message = str(failed.value)
    assert "the body ends with 10 bytes after the last complete event" in message
    assert f"from byte {len(SSE_EVENTS[0])}, frame 1, the first at " in message
    assert repr(SSE_EVENTS[1][:10]) in message and "(end: incomplete, 1 events)" in message


def test_assert_framing_says_when_the_body_is_no_stream() -> None:
    """A JSON body is one unterminated block: the message names the content type."""
    with serving([b'{"error": "x"}'], headers=((b"content-type", b"application/json"),)) as server:
        cap = _capture(server)
    with pytest.raises(AssertionError, match=r"content-type application/json: not a stream\)"):
        cap.assert_framing()


# -- assert_terminated -----------------------------------------------------------------------


def test_assert_terminated_passes_on_one_last_terminal_and_a_clean_end() -> None:
    """[DONE] once, last, and the chunked body ended."""
    with serving() as server:
        _capture(server).assert_terminated()


def test_assert_terminated_reports_a_missing_terminal() -> None:
    """truncate: the stream ends cleanly without [DONE]; the last event is named."""
    with serving(faults=["truncate"]) as server:
        cap = _capture(server)
    pattern = (
        r"no terminal event \(the provider's terminal event\) among 3 events; "
        r"the last is event 2 \(.*\) at \d+\.\d ms"
    )
    with pytest.raises(AssertionError, match=pattern):
        cap.assert_terminated()


def test_assert_terminated_reports_two_terminals() -> None:
    """duplicate:event=3 sends [DONE] twice: both are listed with their times."""
    with serving(faults=["duplicate:event=3"]) as server:
        cap = _capture(server)
    with pytest.raises(AssertionError, match=r"2 terminal events, not one: event 3 \(\[DONE\]\) "
                       r"at \d+\.\d ms, event 4 \(\[DONE\]\) at"):  # fmt: skip
        cap.assert_terminated()


def test_assert_terminated_reports_events_after_the_terminal() -> None:
    """A terminal that is not last: the events after it are named."""
    chunks = [b"event: committed\ndata: {}\n\n", b"event: delta\ndata: {}\n\n"]
    with serving(chunks) as server:
        cap = _capture(server)
    with pytest.raises(AssertionError, match=r"terminal event 0 \(committed\) at \d+\.\d ms is "
                       r"not the last event: then event 1 \(delta\)"):  # fmt: skip
        cap.assert_terminated(["committed"])


def test_assert_terminated_reports_a_socket_left_open() -> None:
    """linger: [DONE] arrives but the response never ends within the timeout."""
    with serving(faults=["linger"]) as server:
        cap = _capture(server, timeout=0.4)
    with pytest.raises(AssertionError, match=r"after terminal event 3 \(\[DONE\]\) at .* the "
                       r"connection stayed open.*end: timeout, last frame 3"):  # fmt: skip
        cap.assert_terminated()


def test_assert_terminated_reports_a_cut_after_the_terminal() -> None:
    """The server closes after [DONE] without the chunked terminator: not a clean end."""
    with serving(end=EndKind.INCOMPLETE) as server:
        cap = _capture(server)
    assert cap.end == "incomplete" and cap.closed_after_terminal is True
    with pytest.raises(AssertionError, match=r"the body ended 'incomplete', not cleanly"):
        cap.assert_terminated()


def test_assert_terminated_needs_a_known_terminal() -> None:
    """An endpoint no provider names, and no terminal=: a one-line UsageError says what to do."""
    with serving([b"data: 1\n\n"], path="/chat") as server:
        cap = _capture(server, "/chat")
    with pytest.raises(UsageError, match=r"no terminal event is known .*pass terminal="):
        cap.assert_terminated()


# -- check -----------------------------------------------------------------------------------


def _openai_server(*faults: str) -> ReplayServer:
    it = stream_interaction("openai-chat-text", gap_ms=2)
    return ReplayServer(cassette(it), speed=1, faults=list(faults))


def test_assert_stream_ok_returns_the_report_of_a_good_provider_stream() -> None:
    """A real OpenAI Chat stream: no errors, the report names the provider."""
    with _openai_server() as server:
        report = _capture(server, empty=True).assert_stream_ok()
    assert report.provider == "openai-chat" and report.errors == []


def test_assert_stream_ok_raises_with_the_report_and_event_times() -> None:
    """corrupt:event=1 (invalid JSON): the AssertionError lists the rule, the event and when
    it arrived."""
    with _openai_server("corrupt:event=1") as server:
        cap = _capture(server, empty=True)
    with pytest.raises(AssertionError) as failed:
        cap.assert_stream_ok(provider="openai-chat")
    message = str(failed.value)
    assert "the checker found" in message and "(openai-chat," in message
    assert re.search(r"error sse\.json at event 1, byte \d+: .*\(event 1 arrived at \d+\.\d ms\)",
                     message)  # fmt: skip


def test_assert_stream_ok_with_a_contract_path_or_a_loaded_contract() -> None:
    """An application's own stream against its contract, as a path or loaded; dropping the
    committed event fails the contract's terminal rule."""
    with serving(_turn_events(), headers=SSE, path="/chat") as server:
        good = _capture(server, "/chat")
    assert good.assert_stream_ok(contract=CONTRACT).errors == []
    assert good.assert_stream_ok(contract=load_contract(CONTRACT)).errors == []
    with serving(_turn_events(), headers=SSE, path="/chat", faults=["drop:event=6"]) as server:
        bad = _capture(server, "/chat")
    with pytest.raises(AssertionError, match=r"contract.*terminal"):
        bad.assert_stream_ok(contract=CONTRACT)


def test_cut_upstream_reads_the_faults_of_the_seen_requests() -> None:
    """Seen requests had their upstream cut when any fault's outcome is an incomplete stream
    or a hang (close, truncate, hang), not for the others (split)."""
    seen = [SimpleNamespace(faults=("split:bytes=3",)), SimpleNamespace(faults=())]
    assert not cut_upstream(seen)
    for spec in ("close:events=2", "truncate", "hang"):
        assert cut_upstream([*seen, SimpleNamespace(faults=(spec,))])


ENDPOINT_CONTRACT = """
[events]
start = ["started"]
terminal = ["committed", "rejected"]

[fields.record]
committed = ["/message_id"]

[upstream]
incomplete = ["rejected"]
"""


def test_assert_stream_ok_passes_record_and_upstream_to_the_checker(tmp_path: Path) -> None:
    """record= (the stored row), upstream_incomplete= and requests= (the replay's seen
    requests) reach the checker: a committed event that disagrees with the row, or that ends a
    turn whose upstream was cut, is an error; both upstream keywords at once is a usage error."""
    contract = tmp_path / "endpoint.contract.toml"
    contract.write_text(ENDPOINT_CONTRACT)
    with serving(_turn_events(), headers=SSE, path="/chat") as server:
        cap = _capture(server, "/chat")
    assert (
        cap.assert_stream_ok(
            contract=contract, record={"message_id": "m_0193"}, upstream_incomplete=False
        ).errors
        == []
    )
    with pytest.raises(AssertionError, match=r"contract\.record at event 6"):
        cap.assert_stream_ok(contract=contract, record={"message_id": "m_other"})
    cut = [SimpleNamespace(faults=("close:events=3",))]
    with pytest.raises(AssertionError, match=r"contract\.upstream at event 6"):
        cap.assert_stream_ok(contract=contract, requests=cut)
    with pytest.raises(AssertionError, match=r"contract\.upstream at event 6"):
        cap.assert_stream_ok(contract=contract, upstream_incomplete=True)
    with pytest.raises(UsageError, match="upstream_incomplete= or requests=, not both"):
        cap.assert_stream_ok(contract=contract, upstream_incomplete=True, requests=cut)


def test_assert_stream_ok_judges_incremental_delivery_from_the_frame_times(tmp_path: Path) -> None:
    """The frames go to the checker with their arrival times: a contract with incremental =
    true passes a spread stream and reports a buffered one (everything in one late read)."""
    contract = tmp_path / "incremental.contract.toml"
    contract.write_text('[stream]\nincremental = true\n[events]\nterminal = ["committed"]\n')
    with serving(_turn_events(), headers=SSE, path="/chat", gap_ms=20) as server:
        assert _capture(server, "/chat").assert_stream_ok(contract=contract).errors == []
    with serving(_turn_events(), headers=SSE, path="/chat", faults=["coalesce"]) as server:
        buffered = _capture(server, "/chat")
    with pytest.raises(AssertionError, match=r"error stream\.buffered: all 7 events arrived"):
        buffered.assert_stream_ok(contract=contract)
