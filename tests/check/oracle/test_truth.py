"""The oracle's own yardsticks: the independent reading of a stream's payloads, the judgement
of what a client delivered against it, the broken variants, and the loopback server."""

from __future__ import annotations

import json

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.check.oracle.outcome import Delivered, judge
from tests.check.oracle.server import HEADER, Body, StreamServer
from tests.check.oracle.streams import corpus_streams
from tests.check.oracle.truth import Reading, read, sse_events
from tests.check.oracle.variants import variants

PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse"]
CORPUS = corpus_streams()


def _chat(*chunks: dict[str, object], done: bool = True) -> bytes:
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


@settings(max_examples=200, deadline=None)
@given(provider=st.sampled_from(PROVIDERS), body=st.binary(max_size=400))
def test_reading_any_bytes_never_raises(provider: str, body: bytes) -> None:
    """Property: the reading takes any bytes (a broken variant, garbage) without raising."""
    assert isinstance(read(provider, body), Reading)


@settings(max_examples=50, deadline=None)
@given(index=st.integers(0, len(CORPUS) - 1), crlf=st.booleans())
def test_the_reading_does_not_depend_on_line_endings(index: int, crlf: bool) -> None:
    """Property: an SSE corpus stream read with CRLF or LF line ends gives the same reading."""
    stream = CORPUS[index]
    if stream.content_type != "text/event-stream":
        return
    lf = stream.body.replace(b"\r\n", b"\n")
    other = lf.replace(b"\n", b"\r\n") if crlf else lf
    assert read(stream.provider, other) == read(stream.provider, lf)


def test_sse_events_follow_the_line_rules() -> None:
    """Comments are skipped, multi-line data joined, one leading space stripped."""
    body = b": hi\nevent: a\ndata: x\ndata:y\n\ndata: z\r\n\r\n"
    assert list(sse_events(body)) == [("a", "x\ny"), (None, "z")]


def test_chat_reading_takes_text_from_a_content_list_and_tool_calls_by_index() -> None:
    """``delta.content`` as a list counts its text parts; tool arguments join per index."""
    body = _chat(
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": [
            {"type": "text", "text": "he"}, {"type": "thinking", "thinking": "no"}]}}]},
        {"choices": [{"index": 0, "delta": {"content": "llo", "tool_calls": [
            {"index": 0, "function": {"arguments": '{"a":'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": " 1}"}}]}, "finish_reason": "stop"}],
         "usage": {"completion_tokens": 3}},
    )  # fmt: skip
    assert read("openai-chat", body) == Reading(
        "hello", ('{"a":1}',), 3, "stop", True, None, "assistant"
    )
    cut = read("openai-chat", body.rsplit(b"data: ", 2)[0])
    assert cut is not None and not cut.complete and cut.finish is None


def test_vertex_streamed_function_arguments_are_put_together() -> None:
    """Vertex's partialArgs across parts make one call with its arguments."""
    parts = [
        {"functionCall": {"name": "f", "willContinue": True}},
        {"functionCall": {"partialArgs": [
            {"jsonPath": "$.items[0].name", "stringValue": "ap", "willContinue": True}],
            "willContinue": True}},
        {"functionCall": {"partialArgs": [{"jsonPath": "$.items[0].name", "stringValue": "ple"},
            {"jsonPath": "$.items[0].n", "numberValue": 2}], "willContinue": True}},
        {"functionCall": {}},
    ]  # fmt: skip
    chunks = [{"candidates": [{"content": {"parts": [p]}}]} for p in parts]
    chunks.append({"candidates": [{"content": {"parts": [{"text": ""}]}, "finishReason": "STOP"}]})
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)
    reading = read("gemini", body)
    assert reading is not None
    assert reading.tool_args == ('{"items":[{"n":2,"name":"apple"}]}',)


def test_judge_names_what_a_client_got_wrong() -> None:
    """Missing text, tool arguments or usage, or a doubled role, are dropped; a wrong finish, a
    cut read as a clean end or a provider error the client did not pass on (as an exception or
    the failed status) are misreported ends; extra text from another block is no drop."""
    truth = Reading("hello", ('{"a":1}',), 3, "stop", True)
    fine = Delivered("hello", ('{"a":1}',), 3, finish="stop")
    assert judge("c", "w", truth, fine).status == "fine"
    assert (
        judge("c", "w", truth, Delivered("summary. hello", ('{"a":1}',), 3, finish="stop")).status
        == "fine"
    )
    assert judge("c", "w", truth, Delivered("hel", ('{"a":1}',), 3)).status == "dropped"
    assert judge("c", "w", truth, Delivered("hello", (), 3)).status == "dropped"
    assert judge("c", "w", truth, Delivered("hello", ('{"a":1}',), None)).status == "dropped"
    wrong = Delivered("hello", ('{"a":1}',), 3, finish="length")
    assert judge("c", "w", truth, wrong).status == "misreported-end"
    cut = Reading("hello", (), None, None, False)
    assert judge("c", "w", cut, Delivered("hello", (), finish=None)).status == "misreported-end"
    failed = Reading("", (), None, "failed", True, error="quota")
    assert judge("c", "w", failed, Delivered("", (), finish="failed")).status == "fine"
    unseen = Delivered("", (), finish="completed")
    assert judge("c", "w", failed, unseen).status == "misreported-end"
    role = Delivered("hello", ('{"a":1}',), 3, finish="stop", role="assistantassistant")
    doubled = Reading("hello", ('{"a":1}',), 3, "stop", True, role="assistant")
    assert judge("c", "w", doubled, role).status == "dropped"


def test_every_variant_breaks_what_it_says() -> None:
    """Each variant differs from its base stream, and the cut ones lose their end."""
    made = {v.name: v for v in variants(CORPUS)}
    assert len(made) >= 12, sorted(made)
    bases = {s.name: s for s in CORPUS}
    for name, variant in made.items():
        base = bases[name.split("~", 1)[0]]
        assert variant.body != base.body and variant.broken, name
        if name.endswith("~cut"):
            reading = read(variant.provider, variant.body)
            assert reading is not None and not reading.complete, name


def test_the_server_sends_the_exact_bytes_with_the_providers_headers() -> None:
    """A request naming a stream gets its body byte for byte, framed by Content-Length, with
    its content type; an unknown name is a 404."""
    body = bytes(range(256)) * 3
    media = "application/vnd.amazon.eventstream"
    with StreamServer({"k": Body(media, body)}) as server, httpx.Client() as client:
        got = client.post(server.url + "/model/x/converse-stream", headers={HEADER: "k"})
        assert got.content == body
        assert got.headers["content-type"] == media
        assert got.headers["content-length"] == str(len(body))
        assert client.get(server.url + "/", headers={HEADER: "nope"}).status_code == 404
