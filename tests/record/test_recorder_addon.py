"""The Recorder addon's hooks and options, driven with mitmproxy's own taddons/tflow helpers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import exceptions
from mitmproxy.test import taddons, tflow

from replayproxy import _store as store
from replayproxy._core.cassette.model import EndKind
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy.testing import interaction


@contextmanager
def _recorder(path: Path, **options: Any) -> Iterator[tuple[Recorder, Any]]:
    rec = Recorder(on_record=lambda interaction: written.append(interaction))
    written: list[Any] = []
    rec.written = written  # type: ignore[attr-defined]
    with taddons.context(rec) as tctx:
        tctx.configure(rec, replayproxy_record=str(path), **options)
        rec.running()
        yield rec, tctx
        rec.done()


def _stream(rec: Recorder, flow: Any, chunks: list[bytes]) -> list[bytes]:
    rec.request(flow)
    rec.responseheaders(flow)
    tap = flow.response.stream
    assert callable(tap)
    return [tap(chunk) for chunk in chunks]


def test_tap_forwards_chunks_unchanged_and_records_non_empty_ones(tmp_path: Path) -> None:
    """The stream tap returns each chunk as is; empty chunks are not frames."""
    path = tmp_path / "c.cassette"
    chunks = [b"data: 1\n\n", b"", b"data: 2\n\n", b""]
    with _recorder(path) as (rec, _):
        flow = tflow.tflow(resp=True)
        assert _stream(rec, flow, chunks) == chunks
        rec.response(flow)
    (interaction,) = store.load(path).interactions
    assert [f.data for f in interaction.frames] == [b"data: 1\n\n", b"data: 2\n\n"]
    assert interaction.end.kind is EndKind.COMPLETE


def test_first_of_error_and_response_wins(tmp_path: Path) -> None:
    """When both `error` and `response` fire for a flow (11.0.2), it is recorded once."""
    path = tmp_path / "c.cassette"
    with _recorder(path) as (rec, _):
        flow = tflow.tflow(resp=True)
        _stream(rec, flow, [b"partial"])
        flow.error = tflow.terr("Client disconnected.")
        rec.error(flow)
        rec.response(flow)
        rec.error(flow)
    (interaction,) = store.load(path).interactions
    assert interaction.end.kind is EndKind.CLIENT_GONE
    assert interaction.end.message == "Client disconnected."
    assert rec.count == 1
    assert rec.written == [interaction]  # type: ignore[attr-defined]  # on_record, once


def test_error_before_response_head_is_no_response(tmp_path: Path) -> None:
    """An error hook with no response head records `no_response` and no response."""
    path = tmp_path / "c.cassette"
    with _recorder(path) as (rec, _):
        flow = tflow.tflow()
        rec.request(flow)
        flow.error = tflow.terr("[Errno 111] Connect call failed")
        rec.error(flow)
    (interaction,) = store.load(path).interactions
    assert interaction.response is None
    assert interaction.end.kind is EndKind.NO_RESPONSE


def test_buffered_response_keeps_its_body(tmp_path: Path) -> None:
    """A response that was not streamed (no responseheaders) is recorded with its body."""
    path = tmp_path / "c.cassette"
    with _recorder(path) as (rec, _):
        flow = tflow.tflow(resp=True)
        rec.request(flow)
        rec.response(flow)
    (interaction,) = store.load(path).interactions
    assert interaction.response is not None
    assert interaction.response.body == flow.response.raw_content
    assert interaction.response.status == flow.response.status_code


def test_in_flight_flows_are_saved_at_shutdown(tmp_path: Path) -> None:
    """Flows still streaming when the proxy stops are saved as `error` with their frames."""
    path = tmp_path / "c.cassette"
    with _recorder(path) as (rec, _):
        _stream(rec, tflow.tflow(resp=True), [b"one", b"two"])
    (interaction,) = store.load(path).interactions
    assert interaction.end.kind is EndKind.ERROR
    assert interaction.response is not None and interaction.response.body == b"onetwo"


def test_not_recording_without_a_path(tmp_path: Path) -> None:
    """With `replayproxy_record` empty, flows pass through and nothing is written."""
    rec = Recorder()
    with taddons.context(rec):
        rec.running()
        flow = tflow.tflow(resp=True)
        rec.request(flow)
        rec.responseheaders(flow)
        assert flow.response.stream is False
        rec.response(flow)
    assert rec.count == 0
    assert list(tmp_path.iterdir()) == []


def test_no_redact_keeps_secrets(tmp_path: Path) -> None:
    """`replayproxy_no_redact` (explicit) keeps credential headers as sent."""
    path = tmp_path / "c.cassette"
    with _recorder(path, replayproxy_no_redact=True) as (rec, _):
        flow = tflow.tflow(resp=True)
        flow.request.headers["authorization"] = "Bearer sk-live"
        rec.request(flow)
        rec.response(flow)
    (interaction,) = store.load(path).interactions
    assert interaction.request.header("authorization") == "Bearer sk-live"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"replayproxy_write_mode": "sideways"}, "must be one of new, append, overwrite"),
        ({"replayproxy_record_mode": "sideways"}, "must be one of new, append, overwrite"),
        (
            {"replayproxy_write_mode": "overwrite", "replayproxy_record_mode": "append"},
            "replayproxy_write_mode=overwrite and replayproxy_record_mode=append disagree",
        ),
        ({"replayproxy_redact_headers": ["bad name"]}, "invalid name to redact"),
        ({"replayproxy_redact_query": [""]}, "invalid name to redact"),
    ],
)
def test_bad_options_raise_options_error(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    """Invalid option values are refused in configure with OptionsError."""
    rec = Recorder()
    with taddons.context(rec) as tctx, pytest.raises(exceptions.OptionsError, match=message):
        tctx.configure(rec, replayproxy_record=str(tmp_path / "c.cassette"), **options)


def test_existing_file_missing_directory_and_corrupt_append(tmp_path: Path) -> None:
    """`new` refuses an existing file; a missing directory or corrupt append target is refused."""
    rec = Recorder()
    existing = tmp_path / "old.cassette"
    store.save(existing, store.Cassette())
    corrupt = tmp_path / "bad.cassette"
    corrupt.write_bytes(b"not msgpack at all")
    with taddons.context(rec) as tctx:
        with pytest.raises(exceptions.OptionsError, match="already exists"):
            tctx.configure(rec, replayproxy_record=str(existing))
        with pytest.raises(exceptions.OptionsError, match="does not exist"):
            tctx.configure(rec, replayproxy_record=str(tmp_path / "nowhere" / "c.cassette"))
        with pytest.raises(exceptions.OptionsError, match="at byte 0"):
            tctx.configure(rec, replayproxy_record=str(corrupt), replayproxy_write_mode="append")
    assert store.load(existing).interactions == ()


@pytest.mark.parametrize("option", ["replayproxy_write_mode", "replayproxy_record_mode"])
def test_write_mode_append_by_its_name_and_its_old_name(
    tmp_path: Path, option: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``append`` adds to an existing cassette, set as replayproxy_write_mode or by its old
    name replayproxy_record_mode; only the old name logs a warning naming the new one."""
    path = tmp_path / "c.cassette"
    store.save(path, store.Cassette((interaction(),)))
    with caplog.at_level("WARNING"), _recorder(path, **{option: "append"}) as (rec, _):
        flow = tflow.tflow(resp=True)
        rec.request(flow)
        rec.response(flow)
    assert len(store.load(path).interactions) == 2
    warned = "replayproxy_record_mode is deprecated, use --set replayproxy_write_mode=append"
    assert (warned in caplog.text) is (option == "replayproxy_record_mode")
