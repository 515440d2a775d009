"""Text import under attack: any text gives a cassette or one CassetteFormatError naming the
line, never a traceback; numbers are bounded before they are converted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy._core.cassette import codec, textform, textload
from replayproxy._errors import CassetteFormatError

EXAMPLE = Path(__file__).resolve().parents[2] / "cassettes" / "anthropic-text.cassette"
TEXT = textform.dumps(store.load(EXAMPLE))
LINES = TEXT.split("\n")


def _import_or_refuse(text: str) -> None:
    try:
        cassette = textload.loads(text)
    except CassetteFormatError as e:
        assert "\n" not in str(e)
        assert re.match(r"cassette: line \d+: ", str(e)), str(e)
        return
    # What imports can be written, read back and exported again.
    assert codec.decode(codec.encode(cassette)).cassette == cassette
    assert textload.loads(textform.dumps(cassette)) == cassette


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=()), max_size=400))
def test_any_text_imports_or_fails_with_one_line(body: str) -> None:
    """Arbitrary text (surrogates included) after the magic line: a cassette or one line."""
    _import_or_refuse(textform.MAGIC + "\n" + body)


NASTY_TOKENS = [
    "9" * 5000, "-1", "0", "99", "600", "1e300", "+1e300ms", "+" + "9" * 30 + "ms",
    "+" + "1" * 20 + "s", "+0." + "0" * 40 + "1ms", "-5ms", "nan", "inf", "1e999", "\r",
    "'a\\r\\nX: y'", "'\\x00'", "http://[::1", "http://h:99999/", "base64:!!", "''", "\"",
    "OK\\r\\nSet-Cookie:", "GET /x", "HTTP/9", "x" * 300, "\udcff",
]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_an_export_with_nasty_tokens_imports_or_fails_with_one_line(data: st.DataObject) -> None:
    """A real export with words replaced by huge, negative, non-finite or injected values."""
    lines = list(LINES)
    for _ in range(data.draw(st.integers(1, 3))):
        n = data.draw(st.integers(1, len(lines) - 1))
        words = lines[n].split(" ")
        k = data.draw(st.integers(0, len(words) - 1))
        words[k] = data.draw(st.sampled_from(NASTY_TOKENS))
        lines[n] = " ".join(words)
    _import_or_refuse("\n".join(lines))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("response 200 OK", "response 99999999999999999999999 OK", r"status must be an integer"),
        ("response 200 OK", "response 9999 OK", r"response.status 9999 is not an HTTP status"),
        ("response 200 OK", "response 99 OK", r"response.status 99 is not an HTTP status"),
        ("end complete +", "end complete +99999999999999999999999", r"bad time"),
        ("end complete +", "end complete +9999999999", r"end.offset_ns is out of range"),
        ("end complete +", "end complete -", r"end.offset_ns is negative"),
        (re.compile(r"recorded-at \S+"), "recorded-at 1e999", r"recorded-at must be a finite"),
        ("POST http://", "POST http://[::1", r"request.url .* does not parse"),
        ("response 200 OK", "response 200 'OK\\r\\nX: 1'", r"response.reason contains CR"),
        ("< content-type: ", "< 'x\\ny': ", r"response.headers\[0\].name contains LF"),
    ],
)
def test_import_cli_bad_numbers_and_fields_are_one_line(
    tmp_path: Path, old: str | re.Pattern[str], new: str, message: str
) -> None:
    """`cassette import` of each bad value: `error: FILE: line N: ...`, exit 2, no output file."""
    pattern = old if isinstance(old, re.Pattern) else re.compile(re.escape(old))
    text, count = pattern.subn(new.replace("\\", "\\\\"), TEXT, count=1)
    assert count == 1
    source, out = tmp_path / "b.txt", tmp_path / "x.cassette"
    source.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["cassette", "import", str(source), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert re.match(rf"error: {re.escape(str(source))}: line \d+: .*{message}", result.output)
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()
