"""The --timing model (parsing, offsets) and how bodies split into frames and keep their
content-encoding only when their bytes carry it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.importers.build import split_events
from replayproxy._core.importers.timing import TimingModel, offsets, parse_timing, spread
from replayproxy._errors import UsageError


def test_parse_and_print_round_trip() -> None:
    for spec in ("zero", "even:ms=20", "tokens:rate=50.5"):
        assert str(parse_timing(spec)) == spec


@pytest.mark.parametrize("spec", ["", "even", "even:ms=0", "even:rate=3", "tokens:rate=-1", "x"])
def test_bad_specs_are_one_line(spec: str) -> None:
    with pytest.raises(UsageError, match=r"^--timing .*expected zero, even:ms=N or tokens:rate=N"):
        parse_timing(spec)


def test_offsets_per_model() -> None:
    frames = [b"a" * 8, b"b" * 1, b"c" * 4]
    assert offsets(TimingModel(), frames) == (0, [0, 0, 0])
    assert offsets(parse_timing("even:ms=10"), frames) == (10**7, [2 * 10**7, 3 * 10**7, 4 * 10**7])
    # 2, 1 and 1 tokens at 10 tokens/s
    assert offsets(parse_timing("tokens:rate=10"), frames) == (0, [2 * 10**8, 3 * 10**8, 4 * 10**8])


@given(st.integers(0, 10**12), st.integers(0, 10**12), st.integers(0, 50))
def test_spread_is_ordered_and_ends_at_the_last_byte(a: int, b: int, n: int) -> None:
    got = spread(min(a, b), max(a, b), n)
    assert len(got) == n and got == sorted(got)
    assert not got or got[-1] == max(a, b)


@given(st.binary(max_size=400), st.sampled_from(["text/event-stream", "application/x-ndjson"]))
def test_split_events_joins_to_the_body(body: bytes, media: str) -> None:
    """Whatever the bytes, the chunks are the body exactly (or none for no event)."""
    chunks = split_events(body, media)
    assert chunks is not None
    assert b"".join(chunks) in (body, b"")
    assert all(chunks)


def test_an_aws_event_stream_is_one_frame_per_message() -> None:
    """Bedrock's binary event-stream (real ConverseStream payloads) splits at each message."""
    import json
    from importlib import resources

    from replayproxy._core.wire.eventstream import encode_event

    text = resources.files("replayproxy.testing").joinpath("payloads/bedrock-converse-text.jsonl")
    payloads = [json.loads(line) for line in text.read_text().splitlines() if line.strip()]
    messages = [encode_event(next(iter(p)), json.dumps(p).encode()) for p in payloads]
    chunks = split_events(b"".join(messages), "application/vnd.amazon.eventstream")
    assert chunks == messages


def test_a_content_encoding_the_bytes_do_not_carry_is_dropped() -> None:
    """Decoded bodies under a gzip/br header (HAR, old VCR.py httpx) lose the header, listed;
    really compressed bytes keep it."""
    import gzip

    from replayproxy._core.importers.build import drop_decoded_encoding

    for coding in (b"gzip", b"br", b"deflate", b"zstd"):
        headers = ((b"content-type", b"text/event-stream"), (b"content-encoding", coding))
        kept, notes = drop_decoded_encoding(headers, b'data: {"a": 1}\n\n')
        assert kept == headers[:1]
        assert notes == [f"content-encoding {coding.decode()} (the file holds the decoded body)"]
    headers = ((b"content-encoding", b"gzip"),)
    assert drop_decoded_encoding(headers, gzip.compress(b"x")) == (headers, [])
