"""Numbers on every line kind of the cassette text form are bounded, and WebSocket times are
limited like frame times (2^53 ns) in the validator and the codec (issue 28, item 7).

``ws-end close +99999999999999999999ns 1000 client ""`` used to reach msgpack and raise
``OverflowError``; a message at 2^63 - 1 ns was accepted and replayed as an endless wait.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette import codec, validate
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.cassette.textload import loads
from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._errors import CassetteFormatError
from replayproxy.testing import realtime_turns, ws_interaction

EXE = str(Path(sys.executable).with_name("replayproxy"))
BIG = "99999999999999999999"  # 20 digits: the most a number token may have
HUGE = "9" * 5000  # more than int() converts

GOOD = """replayproxy-cassette-text 1
interaction 0
  recorded-at 1700000000.5
  request GET wss://x/v1/realtime HTTP/1.1
  response 101 'Switching Protocols' HTTP/1.1 +5ms
  +6ms 'x'
  end complete +99ms
  ws< +6ms text '{"type":"hello"}' frames 3,13
  ws> +9ms binary base64:AAE=
  ws-end close +20ms 1000 server ''
"""

# (line as written, its replacement, what the one-line error says)
CASES = [
    ("ws-end close +20ms", f"ws-end close +{BIG}ns", "ws-end offset is out of range"),
    ("ws-end close +20ms", "ws-end close +9007199254740993ns", "ws-end offset is out of range"),
    ("ws-end close +20ms", "ws-end close -1ns", "ws-end offset is negative"),
    ("ws-end close +20ms", f"ws-end close +{HUGE}ns", "bad time"),
    ("ws< +6ms", f"ws< +{BIG}ns", "ws< offset is out of range"),
    ("ws> +9ms", "ws> +9223372036854775807ns", "ws> offset is out of range"),
    ("ws> +9ms", f"ws> +{BIG}.5s", "ws> offset is out of range"),
    ("20ms 1000", f"20ms {BIG}", "is not a WebSocket close code"),
    ("20ms 1000", "20ms 65536", "is not a WebSocket close code (0-65535)"),
    ("20ms 1000", f"20ms {HUGE}", "ws-end code must be a number or -"),
    ("frames 3,13", f"frames 3,{HUGE}", "frames must be sizes"),
    ("frames 3,13", f"frames 3,{BIG}", "do not add up"),
    ("+6ms 'x'", f"+{BIG}ns 'x'", "response.frames[0].offset_ns is out of range"),
    ("+6ms 'x'", f"+{HUGE}ns 'x'", "bad time"),
    ("response 101", f"response {BIG}", "is not an HTTP status"),
    ("response 101", f"response {HUGE}", "status must be an integer of at most 20 digits"),
    ("HTTP/1.1 +5ms", f"HTTP/1.1 +{BIG}ns", "response.head_offset_ns is out of range"),
    ("end complete +99ms", f"end complete +{BIG}s", "end.offset_ns is out of range"),
    ("recorded-at 1700000000.5", "recorded-at 1e999", "recorded-at must be a finite number"),
    ("recorded-at 1700000000.5", f"recorded-at {HUGE}", "recorded-at must be a finite number"),
]


def test_the_good_text_loads() -> None:
    """The text the cases start from is a valid cassette (each case breaks one number)."""
    (it,) = loads(GOOD).interactions
    assert it.websocket is not None and it.websocket.close.code == 1000


@pytest.mark.parametrize(("old", "new", "message"), CASES)
def test_every_number_is_bounded_with_one_line(old: str, new: str, message: str) -> None:
    """Each out-of-range number is a one-line CassetteFormatError naming its line."""
    text = GOOD.replace(old, new, 1)
    assert text != GOOD
    with pytest.raises(CassetteFormatError) as e:
        loads(text)
    line = str(e.value)
    assert message in line and line.startswith("cassette: line ") and "\n" not in line, line


@pytest.mark.parametrize(
    "session",
    [
        WebSocketSession((WsMessage(2**63 - 1, False, True, b"x"),), WsClose(0, WsCloseKind.OPEN)),
        WebSocketSession((), WsClose(2**53 + 1, WsCloseKind.CLOSE, 1000)),
        WebSocketSession((), WsClose(0, WsCloseKind.CLOSE, 2**16)),
        WebSocketSession((), WsClose(0, WsCloseKind.CLOSE, -1)),
    ],
)
def test_the_codec_neither_writes_nor_reads_unbounded_websocket_numbers(
    session: WebSocketSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing such a session is a one-line error (no OverflowError); so is reading one that
    another writer put in a file."""
    it = replace(ws_interaction(realtime_turns()), websocket=session)
    with pytest.raises(CassetteFormatError, match="cannot write interaction: websocket"):
        codec.encode(Cassette((it,)))
    with pytest.raises(validate.InvalidField, match="websocket"):
        validate.check_interaction(it)
    # Written past the validator (as another writer could): the reader refuses it, one line.
    monkeypatch.setattr(validate, "check_interaction", lambda _: None)
    unchecked = codec.encode_header(()) + codec.encode_interaction(it)
    monkeypatch.undo()
    with pytest.raises(CassetteFormatError, match="websocket") as e:
        codec.decode(unchecked)
    assert "\n" not in str(e.value)


def test_the_limit_itself_is_accepted() -> None:
    """2^53 ns and close code 65535 are the largest values a cassette holds."""
    session = WebSocketSession(
        (WsMessage(2**53, True, True, b"x"),), WsClose(2**53, WsCloseKind.CLOSE, 65535)
    )
    it = replace(ws_interaction(realtime_turns()), websocket=session)
    assert codec.decode(codec.encode(Cassette((it,)))).cassette.interactions[0] == it


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("ws-end close +20ms 1000 server", f"ws-end close +{BIG}ns 1000 client"),
        ("ws< +6ms", f"ws< +{BIG}ns"),
    ],
)
def test_cassette_import_says_one_line(tmp_path: Path, old: str, new: str) -> None:
    """``cassette import`` of the issue's lines: ``error: ... line N: ...``, exit 2, no file."""
    src = tmp_path / "c.txt"
    src.write_text(GOOD.replace(old, new))
    out = tmp_path / "c.cassette"
    run = subprocess.run(
        [EXE, "cassette", "import", str(src), "-o", str(out)], capture_output=True, timeout=60
    )
    err = run.stderr.decode()
    assert run.returncode == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "out of range" in err and "Traceback" not in err and not out.exists()


# -- URLs in the text form's request lines -----------------------------------------------------

URL_TEXT = """replayproxy-cassette-text 1
interaction 0
  request GET {url} HTTP/1.1
  response 200 OK HTTP/1.1 +5ms
  end complete +99ms
"""


@pytest.mark.parametrize(
    "url",
    ["http://[::1", "http://[::1]:99999/", "http://[zz]/x", "http://a:-1/", "http://a]/",
     "http://user@[::1/", "http:///x", "//a/b", "http:"],
)  # fmt: skip
def test_a_bad_request_url_is_one_line(url: str) -> None:
    """Brackets, ports, hosts that do not parse: one line naming the URL."""
    with pytest.raises(CassetteFormatError) as e:
        loads(URL_TEXT.format(url=url))
    assert "request.url" in str(e.value) and "\n" not in str(e.value)


_URL_PIECES = [*"htps:/[]@%.-_?#=&19afz", "::1", "xn--", "%25", "99999"]


@given(st.lists(st.sampled_from(_URL_PIECES), max_size=30).map("".join))
def test_any_request_url_loads_or_is_one_line(tail: str) -> None:
    """``http://`` followed by anything: a cassette whose URL every reader can split (host and
    port included), or one CassetteFormatError line; never another exception."""
    try:
        cassette = loads(URL_TEXT.format(url="http://" + tail))
    except CassetteFormatError as e:
        assert "\n" not in str(e)
        return
    parts = urlsplit(cassette.interactions[0].request.url)
    parts.hostname, parts.port  # noqa: B018 -- neither raises for a URL that loaded
