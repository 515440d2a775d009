"""The checker on recordings of an application's own streaming endpoint: content-encoded
bodies are decoded first, a compressed stream is reported as a buffering risk, a buffered
delivery fails an ``incremental`` contract, and non-stream interactions are skipped."""

from __future__ import annotations

import dataclasses
import gzip
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Frame, Interaction
from replayproxy._core.check import RULES
from replayproxy._errors import UsageError
from replayproxy.checking import check, check_cassette, check_interaction, check_stream
from replayproxy.testing import _builders as builders
from tests.check.contract_cases import contract, ndjson_events, sse_events
from tests.check.recording_cases import (
    CODINGS,
    RECORDING_CASES,
    app_contract,
    buffered_frames,
    compress_whole,
    header,
    recording,
    streamed_frames,
)

MISLEADING = {"sse.utf8", "sse.unterminated", "sse.json", "contract.terminal", "contract.start"}


def _rules(interaction: Interaction, **kwargs: object) -> dict[str, str]:
    report = check_interaction(interaction, **kwargs)  # type: ignore[arg-type]
    assert report.skipped is None, report.skipped
    return {v.rule: v.severity for v in report.violations}


@pytest.mark.parametrize("rule", sorted(RECORDING_CASES))
def test_each_recording_case_reports_exactly_its_rules(rule: str) -> None:
    """Each endpoint-recording case reports its rule (with the catalogue's severity, on one
    line) and nothing but the rules it names."""
    expected, run = RECORDING_CASES[rule]
    violations = run()
    assert {v.rule for v in violations} == expected, [str(v) for v in violations]
    for v in violations:
        assert v.severity == RULES[v.rule].severity and "\n" not in v.message


@pytest.mark.parametrize("coding", sorted(CODINGS))
def test_a_buffering_compressed_endpoint_reports_compression_and_buffering(coding: str) -> None:
    """The issue's planted bug: compression middleware holds the whole stream and sends it at
    the end (the compressor's first bytes at 11 ms, the rest at 2190 ms). The checker decodes
    the body and reports the compression (warning) and, under ``incremental = true``, the
    buffering (error), not invalid UTF-8, an unterminated event or a missing terminal."""
    events = sse_events()
    interaction = recording(buffered_frames(coding, events), coding)
    incremental = app_contract(incremental=True)
    rules = _rules(interaction, contract=incremental)
    assert rules == {"http.compressed-stream": "warning", "stream.buffered": "error"}
    assert not MISLEADING & set(rules)
    # Without the incremental key the stream is valid: only the compression is named.
    assert _rules(interaction, contract=contract()) == {"http.compressed-stream": "warning"}


def test_the_buffered_message_names_frames_times_and_bytes() -> None:
    """stream.buffered says how many frames, when the first and last arrived, their bytes."""
    interaction = recording(buffered_frames("gzip", sse_events()), "gzip")
    report = check_interaction(interaction, contract=app_contract(incremental=True))
    (buffered,) = [v for v in report.violations if v.rule == "stream.buffered"]
    first = len(interaction.response.frames[0].data)  # type: ignore[union-attr]
    assert first == 10  # gzip's header, written before the compressor holds anything back
    assert "all 7 events arrived within 0.0 ms" in buffered.message
    assert "2190.0 ms after the request" in buffered.message
    assert f"2 frame(s), {sum(len(f.data) for f in interaction.response.frames)} bytes" in (  # type: ignore[union-attr]
        buffered.message
    )
    assert f"{first} bytes at 11.0 ms" in buffered.message
    (compressed,) = [v for v in report.violations if v.rule == "http.compressed-stream"]
    assert "gzip/deflate middleware buffers SSE" in compressed.message
    assert "exclude text/event-stream from compression" in compressed.message


@pytest.mark.parametrize("coding", sorted(CODINGS))
def test_a_compressed_endpoint_that_flushes_per_event_only_warns(coding: str) -> None:
    """Compression flushed after every event streams fine: the events spread over 180 ms, so
    an incremental contract holds and only the compression warning remains."""
    interaction = recording(streamed_frames(coding, sse_events()), coding)
    rules = _rules(interaction, contract=app_contract(incremental=True))
    assert rules == {"http.compressed-stream": "warning"}


def test_incremental_passes_on_a_streamed_recording_and_fails_on_a_buffered_one() -> None:
    """Uncompressed: a recording with one frame per event 30 ms apart keeps ``incremental =
    true``; the same events in one frame after 2.19 s break it."""
    c = app_contract(incremental=True)
    assert _rules(recording(streamed_frames(None, sse_events())), contract=c) == {}
    assert _rules(recording(buffered_frames(None, sse_events())), contract=c) == {
        "stream.buffered": "error"
    }


def test_a_fast_burst_is_not_called_buffered() -> None:
    """A stream over within 50 ms of the request (a replay at speed 0, a cached answer) cannot
    be told from a buffered one: no violation."""
    chunks = [b"".join(sse_events())]
    interaction = recording((chunks, [20.0]))
    assert _rules(interaction, contract=app_contract(incremental=True)) == {}


def test_incremental_without_arrival_times_is_a_note_not_a_violation() -> None:
    """Bytes without offsets cannot show the delivery: the report says it was not checked."""
    report = check_stream(sse_events(), contract=app_contract(incremental=True))
    assert report.violations == ()
    assert any("incremental = true not checked" in n for n in report.notes)
    # Frames with their offsets (from a recording or a capture) are judged.
    frames = [Frame(builders.ns(2190), b"".join(sse_events()))]
    assert [v.rule for v in check(frames, contract=app_contract(incremental=True))] == [
        "stream.buffered"
    ]


@settings(max_examples=40, deadline=None)
@given(
    coding=st.sampled_from(sorted(CODINGS)),
    seed=st.integers(0, 2**32),
    pieces=st.integers(1, 60),
    flushed=st.booleans(),
)
def test_any_split_of_an_encoded_body_gives_the_whole_bodys_report(
    coding: str, seed: int, pieces: int, flushed: bool
) -> None:
    """Property: the encoded body cut into any frames is decoded incrementally to the same
    report as the whole body in one frame (offsets are in the decoded body)."""
    events = sse_events()
    chunks = streamed_frames(coding, events)[0] if flushed else compress_whole(coding, events)
    body = b"".join(chunks)
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(body)), min(pieces, len(body) - 1)))
    split = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    enc = header(coding)
    whole = check([body], contract=contract(), content_encoding=enc)
    assert [v.rule for v in whole] == ["http.compressed-stream"]
    assert check(split, contract=contract(), content_encoding=enc) == whole
    cut = body[: len(body) * 2 // 3]  # a cut body: the same report whatever the split
    cut_whole = check([cut], contract=contract(), content_encoding=enc)
    assert check([cut[:7], cut[7:]], contract=contract(), content_encoding=enc) == cut_whole


def test_stacked_codings_are_undone_in_reverse_order() -> None:
    """``Content-Encoding: gzip, br`` (gzip applied first) decodes to the stream."""
    body = b"".join(sse_events())
    encoded = b"".join(compress_whole("br", [gzip.compress(body)]))
    rules = [v.rule for v in check(encoded, contract=contract(), content_encoding="gzip, br")]
    assert rules == ["http.compressed-stream"]


def test_a_compressed_provider_recording_is_decoded_too() -> None:
    """A gzip'd OpenAI stream recording is checked by its grammar after decoding."""
    plain = builders.stream_interaction("openai-chat-text")
    body = gzip.compress(b"".join(f.data for f in plain.response.frames))  # type: ignore[union-attr]
    headers = (*plain.response.headers, (b"content-encoding", b"gzip"))  # type: ignore[union-attr]
    interaction = builders.interaction(
        [body[:10], body[10:]], request=plain.request, headers=headers
    )
    report = check_interaction(interaction)
    assert report.provider == "openai-chat"
    assert [v.rule for v in report.violations] == ["http.compressed-stream"]


def test_an_encoding_the_checker_cannot_decode_is_skipped_or_refused() -> None:
    """``compress`` (or zstd without zstandard) is named: an interaction is skipped with the
    reason, a raw body is a one-line usage error."""
    interaction = recording(([b"\x1f\x9d\x90"], [300.0]), None)
    interaction = builders.interaction(
        [b"\x1f\x9d\x90"],
        request=interaction.request,
        headers=(*interaction.response.headers, (b"content-encoding", b"compress")),  # type: ignore[union-attr]
    )
    report = check_interaction(interaction, contract=contract())
    assert report.skipped is not None and "'compress' is not one the checker can decode" in (
        report.skipped
    )
    with pytest.raises(UsageError, match="cannot check this body: content-encoding 'compress'"):
        check(b"x", contract=contract(), content_encoding="compress")


def test_non_stream_interactions_are_skipped_under_a_contract() -> None:
    """The issue's cassette: a recorded ``GET /turns`` JSON beside the ``POST /chat`` stream.
    Under a contract the JSON is skipped with the reason (it used to give 3 errors), the
    stream is checked."""
    turns = builders.interaction(
        [b'[{"turn_id":"t_8f2c41"}]'],
        request=builders.request("GET", "http://app.invalid/api/turns", body=b""),
        headers=builders.JSON_HEADERS,
    )
    chat = recording(streamed_frames(None, sse_events()))
    reports = check_cassette(builders.cassette(turns, chat), contract=contract())
    assert reports[0].skipped == (
        "application/json: not a text/event-stream response (the contract's sse framing)"
    )
    assert reports[0].violations == ()
    assert reports[1].skipped is None and reports[1].violations == ()


@pytest.mark.parametrize("content_type", [None, b"text/plain", b"application/octet-stream"])
def test_a_stream_without_its_media_type_is_checked_not_skipped(content_type: bytes | None) -> None:
    """Under a contract a response whose content type says nothing (none, text/plain,
    octet-stream) is checked, so the endpoint's missing text/event-stream is an error
    (EventSource fails the connection) instead of a silent skip."""
    chunks, at = streamed_frames(None, sse_events())
    headers = () if content_type is None else ((b"content-type", content_type),)
    interaction = builders.interaction(
        chunks,
        request=builders.request("POST", "http://app.invalid/api/chat"),
        headers=headers,
        at_ms=at,
    )
    report = check_interaction(interaction, contract=contract())
    assert report.skipped is None
    (v,) = report.violations
    shown = "missing" if content_type is None else repr(content_type.decode())
    assert (v.rule, v.message) == (
        "sse.content-type",
        f"Content-Type is {shown}, not text/event-stream; SDKs will not decode it as a stream",
    )


def test_ndjson_endpoints_are_judged_the_same_way() -> None:
    """An NDJSON contract with incremental = true: one line per frame 30 ms apart passes; the
    lines gzip'd and sent at the end are compressed (naming the NDJSON media type) and
    buffered."""
    nd = dataclasses.replace(contract("chat-turn-ndjson.contract.toml"), incremental=True)
    lines = ndjson_events()
    ctype = b"application/x-ndjson"
    assert _rules(recording(streamed_frames(None, lines), content_type=ctype), contract=nd) == {}
    interaction = recording(buffered_frames("gzip", lines), "gzip", content_type=ctype)
    report = check_interaction(interaction, contract=nd)
    assert {v.rule for v in report.violations} == {"http.compressed-stream", "stream.buffered"}
    assert "exclude application/x-ndjson from compression" in report.violations[0].message
