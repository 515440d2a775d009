"""A miss says its fix in the words of where it is read: CLI flags, pytest's marker keyword
and option, use_cassette()'s keyword arguments; the spelling follows the option table."""

from __future__ import annotations

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request
from replayproxy._core.matching.explanation import CLI_WORDS, PYTHON_WORDS, pytest_words
from replayproxy._core.matching.matcher import Matcher, Miss
from replayproxy._core.replay.options import option


def _req(port: int, content: str, query: str) -> Request:
    body = b'{"messages": [{"content": "%s"}]}' % content.encode()
    return Request("POST", f"http://127.0.0.1:{port}/v1/chat?t={query}", body=body)


def _miss() -> Miss:
    recorded = [Interaction(_req(1, "Say hi", "1"), None, Ending(EndKind.NO_RESPONSE, 0))]
    miss = Matcher(recorded).match(_req(2, "Say hello", "2"))
    assert isinstance(miss, Miss)
    return miss


def test_each_front_spells_the_fix_its_own_way() -> None:
    """The same miss: CLI flags; the marker keyword and the --replayproxy- option; the
    keyword arguments of use_cassette()."""
    miss = _miss()
    assert miss.fixes == (("ignore_query", "t"), ("ignore_body_field", "/messages/0/content"))
    cli = miss.explain(CLI_WORDS)
    assert "to match it, add: --ignore-query t --ignore-body-field /messages/0/content" in cli
    words = pytest_words("tests/test_x.py::test_y", "tests/cassettes/test_x/test_y.cassette")
    text = miss.explain(words)
    assert (
        'to match it, add: @pytest.mark.replayproxy(ignore_query=["t"], '
        'ignore_body_field=["/messages/0/content"]), or --replayproxy-ignore-query=t '
        "--replayproxy-ignore-body-field=/messages/0/content"
    ) in text
    assert "pytest 'tests/test_x.py::test_y' --replayproxy-record-mode=new_episodes" in text
    assert text.count("cassette: tests/cassettes/test_x/test_y.cassette") == 1
    assert "--ignore-query t" not in text
    python = miss.explain(PYTHON_WORDS)
    assert (
        'use_cassette(..., ignore_query=["t"], ignore_body_field=["/messages/0/content"])' in python
    )
    assert "--" not in python.split("to match it")[1]


def test_the_uncompared_host_is_not_listed() -> None:
    """The hosts differ but match_host is off: the miss keeps the difference, no text shows
    it; without the host (base-URL mode) the first line names none either."""
    miss = _miss()
    assert any(d.part == "host" and not d.compared for d in miss.differences)
    for text in (miss.explain(), miss.one_line(), miss.short()):
        assert "127.0.0.1:1" not in text
    assert "(host " not in miss.explain(pytest_words("t.py::t", "c", host=False))


def test_the_spelling_is_the_option_tables() -> None:
    """Every option a miss can suggest is spelt as the table spells it, on each front."""
    words = pytest_words("t.py::t", "c")
    for name in ("ignore_query", "ignore_body_field", "allow_repeats", "match_host"):
        assert CLI_WORDS.flag((name, None)) == option(name).cli_flag
        assert words.flag((name, None)) == option(name).pytest_flag
