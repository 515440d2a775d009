"""``cassette import-vcr``: a real VCR.py recording of an openai stream imports and replays to
the openai SDK with the same text, one frame per event, its losses listed and shown; gzip and
``!!binary`` bodies stay byte-exact; an empty stream body is refused by name, nothing written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import openai
import pytest
from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy._core.wire.sse import parse_events
from replayproxy.testing.simulator import Simulator
from tests.cassette.import_helpers import (
    MESSAGES,
    real_events,
    replayed_text,
    sse_body,
    text_of,
)

vcr = pytest.importorskip("vcr")
vcr_serialize = pytest.importorskip("vcr.serialize")
yamlserializer = pytest.importorskip("vcr.serializers.yamlserializer")
VcrRequest = pytest.importorskip("vcr.request").Request


def rp(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def record_with_vcr(path: Path) -> str:
    """Record an openai SDK stream from the simulator with VCR.py itself; the text read."""
    with Simulator() as sim, vcr.use_cassette(str(path), record_mode="all"):
        client = openai.OpenAI(base_url=sim.url + "/v1", api_key="sk-live", max_retries=0)
        stream = client.chat.completions.create(
            model="gpt-4.1-nano",
            messages=MESSAGES,
            stream=True,  # type: ignore[arg-type]
        )
        return "".join(c.delta.content or "" for chunk in stream for c in chunk.choices)


def vcr_yaml(path: Path, body: bytes, headers: dict[str, list[str]]) -> None:
    """A cassette file written by VCR.py's own serializer (bytes become ``!!binary``)."""
    request = VcrRequest(
        "POST",
        "https://api.openai.com/v1/chat/completions",
        json.dumps({"messages": MESSAGES, "model": "gpt-4.1-nano", "stream": True}),
        {"content-type": "application/json"},
    )
    response = {
        "body": {"string": body},
        "headers": headers,
        "status": {"code": 200, "message": "OK"},
    }
    text = vcr_serialize.serialize({"requests": [request], "responses": [response]}, yamlserializer)
    path.write_text(text)


def test_a_real_vcr_recording_replays_to_the_openai_sdk(tmp_path: Path) -> None:
    """Recorded by VCR.py from the simulator, imported, replayed: the same text; one frame per
    SSE event; the API key redacted; show and the summary line list what was lost."""
    yaml_path = tmp_path / "cassettes" / "test_chat" / "test_stream.yaml"
    yaml_path.parent.mkdir(parents=True)
    original = record_with_vcr(yaml_path)
    assert original and "sk-live" in yaml_path.read_text()
    code, output = rp("cassette", "import-vcr", str(tmp_path / "cassettes"))
    assert code == 0, output
    out = yaml_path.with_suffix(".cassette")
    assert "1 interactions, 1 streams" in output and "lost: frame boundaries 1" in output
    assert replayed_text(out) == original
    x = store.load(out).interactions[0]
    assert len(x.frames) == len(parse_events(x.response.body))  # type: ignore[union-attr]
    assert all(len(parse_events(f.data)) == 1 for f in x.frames)
    assert b"sk-live" not in out.read_bytes()
    code, shown = rp("cassette", "show", str(out))
    assert (
        "interaction 0 lost: frame boundaries (one frame per event); timing (--timing zero)"
        in shown
    )
    code, rows = rp("cassette", "show", "--json", str(out))
    lost = json.loads(rows)[0]["lost"]
    assert lost.startswith("frame boundaries (one frame per event); timing (--timing zero)")
    assert f"interaction 0 lost: {lost}\n" in shown  # the same words as the table's
    code, output = rp("cassette", "import-vcr", str(yaml_path))
    assert code == 1 and "already exists; pass --force" in output


def test_gzip_and_binary_bodies_stay_byte_exact(tmp_path: Path) -> None:
    """A gzip'd stream (VCR.py's default keeps it compressed, as ``!!binary``) imports with the
    same bytes and its content-encoding; the openai SDK still reads the same text."""
    events = real_events()
    body = gzip.compress(sse_body(events))
    path = tmp_path / "test_gzip.yaml"
    vcr_yaml(path, body, {"content-type": ["text/event-stream"], "content-encoding": ["gzip"]})
    assert "!!binary" in path.read_text()
    code, output = rp("cassette", "import-vcr", "--timing", "even:ms=5", str(path))
    assert code == 0, output
    x = store.load(tmp_path / "test_gzip.cassette").interactions[0]
    assert x.response is not None and x.response.body == body
    assert x.response.header("content-encoding") == "gzip"
    code, shown = rp("cassette", "show", str(tmp_path / "test_gzip.cassette"))
    assert "frame boundaries (gzip body kept as one frame); timing (--timing even:ms=5)" in shown
    assert replayed_text(tmp_path / "test_gzip.cassette") == text_of(events)


def test_an_empty_stream_body_is_refused_by_name(tmp_path: Path) -> None:
    """The pydantic-ai failure: an event-stream response with an empty body is an error naming
    the file, interaction, method and URL; that file gets no cassette; the others do."""
    bad, good = tmp_path / "test_bad.yaml", tmp_path / "test_good.yaml"
    vcr_yaml(bad, b"", {"content-type": ["text/event-stream; charset=utf-8"]})
    vcr_yaml(good, sse_body(real_events()[:3]), {"content-type": ["text/event-stream"]})
    code, output = rp("cassette", "import-vcr", str(tmp_path))
    assert code == 1
    assert (
        f"error: {bad}: interaction 0 (POST https://api.openai.com/v1/chat/completions): "
        "the text/event-stream response body is empty"
    ) in output
    assert not bad.with_suffix(".cassette").exists()
    assert len(store.load(good.with_suffix(".cassette")).interactions[0].frames) == 4


def test_an_unparseable_file_is_named(tmp_path: Path) -> None:
    """A file that is not YAML is one line naming it, exit 1."""
    path = tmp_path / "test_x.yaml"
    path.write_text("interactions: [\n")
    code, output = rp("cassette", "import-vcr", str(path))
    assert code == 1 and f"{path}: not a VCR.py cassette (unparseable" in output


def test_a_binary_aws_event_stream_is_byte_exact_one_frame_per_message(tmp_path: Path) -> None:
    """Bedrock's event-stream (real ConverseStream payloads), ``!!binary`` in the YAML: the
    same bytes, one frame per message."""
    from importlib import resources

    from replayproxy._core.wire.eventstream import encode_event

    text = resources.files("replayproxy.testing").joinpath("payloads/bedrock-converse-text.jsonl")
    payloads = [json.loads(line) for line in text.read_text().splitlines() if line.strip()]
    messages = [encode_event(next(iter(p)), json.dumps(p).encode()) for p in payloads]
    path = tmp_path / "test_bedrock.yaml"
    vcr_yaml(path, b"".join(messages), {"content-type": ["application/vnd.amazon.eventstream"]})
    assert "!!binary" in path.read_text()
    code, output = rp("cassette", "import-vcr", str(path))
    assert code == 0, output
    x = store.load(tmp_path / "test_bedrock.cassette").interactions[0]
    assert [f.data for f in x.frames] == messages


def test_a_directory_walk_skips_files_that_are_no_cassette(tmp_path: Path) -> None:
    """A package.json and a broken .yml beside a cassette are skipped with a line each (exit 0);
    named on the command line, the same file is an error (exit 1); a directory of nothing but
    such files is a usage error, not a silent success."""
    good = tmp_path / "test_good.yaml"
    vcr_yaml(good, sse_body(real_events()[:3]), {"content-type": ["text/event-stream"]})
    (tmp_path / "package.json").write_text('{"name": "x", "version": "1.0.0"}')
    (tmp_path / "notes.yml").write_text("key: [unclosed\n")
    code, output = rp("cassette", "import-vcr", str(tmp_path))
    assert code == 0, output
    assert (
        f"skipped {tmp_path / 'package.json'}: not a VCR.py cassette (no interactions list)"
        in output
    )
    assert f"skipped {tmp_path / 'notes.yml'}: not a VCR.py cassette (unparseable" in output
    assert good.with_suffix(".cassette").exists()
    assert not (tmp_path / "package.cassette").exists()
    code, output = rp("cassette", "import-vcr", str(tmp_path / "package.json"))
    assert code == 1 and "error:" in output and "1 of 1 file(s) failed" in output
    only = tmp_path / "only"
    only.mkdir()
    (only / "package.json").write_text("{}")
    code, output = rp("cassette", "import-vcr", str(only))
    assert code == 2 and "no VCR.py cassettes in" in output
