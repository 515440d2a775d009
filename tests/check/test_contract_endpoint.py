"""Contract keys for endpoint recordings: fields that must match the stored record
(``fields.record``), the terminal events allowed after an incomplete upstream
(``upstream.incomplete``), ``stream.incremental`` and ``fields.volatile``: parsed, validated,
checked both ways through ``check_stream``, ``check``, ``assert_stream_ok`` and
``check_cassette``."""

from __future__ import annotations

import json

import pytest

from replayproxy._core.check import Contract, parse_contract
from replayproxy._errors import UsageError
from replayproxy.checking import (
    StreamContractError,
    assert_stream_ok,
    check,
    check_cassette,
    check_stream,
    load_contract,
)
from replayproxy.testing import _builders as builders
from tests.check.contract_cases import EXAMPLES, sse_events
from tests.check.recording_cases import recording, streamed_frames

BASE = (EXAMPLES / "chat-turn.contract.toml").read_text()
ENDPOINT = EXAMPLES / "chat-endpoint.contract.toml"
ROW = {"turn_id": "t_8f2c41", "message_id": "m_0193", "record_version": 3}


def _contract(extra: str) -> Contract:
    return parse_contract(BASE + "\n" + extra, fmt="toml")


RECORD = _contract('[fields.record]\ncommitted = ["/message_id", "/turn_id"]\n')
REJECT_ONLY = _contract('[upstream]\nincomplete = ["rejected"]\n')


def _body(**committed: object) -> bytes:
    """The example stream, its committed event's payload replaced."""
    events = sse_events()
    payload = {"turn_id": "t_8f2c41", **committed}
    events[-1] = f"event: committed\ndata: {json.dumps(payload)}\n\n".encode()
    return b"".join(events)


def _rejected() -> bytes:
    events = sse_events()
    events[-1] = b'event: rejected\ndata: {"turn_id":"t_8f2c41","reason":"upstream cut"}\n\n'
    return b"".join(events)


def test_record_fields_equal_to_the_record_pass() -> None:
    """The committed event carries the record's message_id and turn_id: no violation."""
    assert check(b"".join(sse_events()), contract=RECORD, record=ROW) == []


def test_a_record_field_that_differs_names_event_field_and_both_values() -> None:
    """A committed message_id other than the stored one is contract.record, naming the event
    index, the pointer, the streamed and the stored value."""
    (v,) = check(_body(message_id="m_0194"), contract=RECORD, record=ROW)
    assert (v.rule, v.severity, v.event) == ("contract.record", "error", 6)
    assert v.message == (
        "the committed event carries /message_id = 'm_0194', the stored record has 'm_0193': "
        "the client shows a turn the database does not hold"
    )


def test_a_missing_record_field_is_reported_with_or_without_a_record() -> None:
    """Without record= the fields must still be there; with it, the stored value is named."""
    c = _contract('[fields.record]\ncommitted = ["/record_version"]\n')
    body = _body(message_id="m_0193")
    (bare,) = check(body, contract=c)
    assert bare.message == "the committed event lacks /record_version"
    (given,) = check(body, contract=c, record=ROW)
    assert given.message == "the committed event lacks /record_version (the stored record has 3)"


def test_record_pointers_may_name_a_different_record_field() -> None:
    """``committed = { "/version" = "/record_version" }``: the event's /version against the
    record's /record_version; JSON true is not the number 1."""
    c = _contract('[fields.record]\ncommitted = { "/version" = "/record_version" }\n')
    assert check(_body(message_id="m", version=3), contract=c, record=ROW) == []
    (v,) = check(_body(message_id="m", version=4), contract=c, record=ROW)
    assert "/version = 4, the stored record has 3 at /record_version" in v.message
    flag = _contract('[fields.record]\ncommitted = ["/ok"]\n')
    (v,) = check(_body(message_id="m", ok=True), contract=flag, record={"ok": 1})
    assert v.rule == "contract.record"


def test_a_record_without_the_named_field_is_a_usage_error() -> None:
    """A record that lacks a pointer the contract names is a mistake in the test, said once,
    before any event: the pointer, the contract key and what the record holds."""
    with pytest.raises(UsageError) as e:
        check(b"".join(sse_events()), contract=RECORD, record={"turn_id": "t_8f2c41"})
    assert str(e.value) == (
        "record= has no /message_id (contract fields.record.committed); it holds 'turn_id'"
    )


def test_committed_after_an_incomplete_upstream_is_an_error() -> None:
    """The planted bug "closed connection = committed": with upstream_incomplete=True the only
    terminal the contract allows is rejected, so committed is contract.upstream."""
    body = b"".join(sse_events())
    (v,) = check(body, contract=REJECT_ONLY, upstream_incomplete=True)
    assert (v.rule, v.severity, v.event) == ("contract.upstream", "error", 6)
    assert v.message == (
        "committed ends a turn whose upstream stream was incomplete; after an incomplete "
        "upstream only rejected may end it: a cut answer is stored as a finished turn"
    )
    assert check(_rejected(), contract=REJECT_ONLY, upstream_incomplete=True) == []
    assert check(body, contract=REJECT_ONLY, upstream_incomplete=False) == []


def test_an_incomplete_upstream_without_the_contract_key_is_a_note() -> None:
    """A contract without upstream.incomplete cannot say which terminal may follow: the report
    notes that it was not checked."""
    report = check_stream(b"".join(sse_events()), contract=_contract(""), upstream_incomplete=True)
    assert report.violations == ()
    assert any("has no upstream.incomplete" in note for note in report.notes)


def test_assert_stream_ok_and_check_cassette_take_the_same_keywords() -> None:
    """assert_stream_ok raises with the record rule; check_cassette passes record= and
    upstream_incomplete= to every selected interaction."""
    with pytest.raises(StreamContractError, match=r"contract\.record at event 6"):
        assert_stream_ok(_body(message_id="m_x"), contract=RECORD, record=ROW)
    assert_stream_ok(b"".join(sse_events()), contract=RECORD, record=ROW)
    cassette = builders.cassette(recording(streamed_frames(None, sse_events())))
    (report,) = check_cassette(cassette, contract=REJECT_ONLY, upstream_incomplete=True)
    assert [v.rule for v in report.violations] == ["contract.upstream"]
    (report,) = check_cassette(cassette, contract=RECORD, record={**ROW, "message_id": "m_1"})
    assert [v.rule for v in report.violations] == ["contract.record"]


def test_record_and_upstream_need_a_contract() -> None:
    """record= or upstream_incomplete= with a provider is a one-line usage error."""
    for kwargs in ({"record": ROW}, {"upstream_incomplete": True}):
        with pytest.raises(UsageError, match="pass contract= too"):
            check(b"data: [DONE]\n\n", provider="openai", **kwargs)  # type: ignore[arg-type]


def test_volatile_incremental_and_the_endpoint_example_contract() -> None:
    """docs/examples/chat-endpoint.contract.toml parses to the documented values: volatile
    pointers per type and for every type ("*"), incremental, the record fields and the
    terminal allowed after an incomplete upstream."""
    c = load_contract(ENDPOINT)
    assert c.incremental is True
    assert c.after_incomplete == frozenset({"rejected"})
    assert c.record_for("committed") == (("/record_version", "/record_version"),)
    assert ("*", "/turn_id") in c.volatile
    assert c.volatile_for("started") == ("/turn_id", "/created_at")
    assert c.volatile_for("delta") == ("/turn_id",)
    flat = parse_contract('[fields]\nvolatile = ["/created_at", "/a~1b"]\n', fmt="toml")
    assert flat.volatile == (("*", "/created_at"), ("*", "/a~1b"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[stream]\nincremental = 'yes'", "stream.incremental must be true or false, not 'yes'"),
        (
            "[fields]\nvolatile = ['created_at']",
            "fields.volatile takes JSON pointers (RFC 6901): write '/created_at', not 'created_at'",
        ),
        ("[fields]\nvolatile = ['/a~2']", "fields.volatile: JSON pointer has '~' not followed"),
        ("[fields.record]\ncommitted = 'version'", "write '/version', not 'version'"),
        ("[fields]\nrecord = 3", "fields.record must be a table of type = [JSON pointers]"),
        (
            "[events]\nterminal = ['committed']\n[upstream]\nincomplete = ['failed']",
            "upstream.incomplete names 'failed', which is not a terminal event "
            "(events.terminal: committed)",
        ),
        (
            "[events]\nterminal = ['committed']\n[upstream]\nincomplete = []",
            "upstream.incomplete must name at least one terminal event",
        ),
        ("[upstream]\ncomplete = 1", "unknown key upstream.complete (known: incomplete)"),
    ],
)
def test_bad_endpoint_keys_are_one_line_usage_errors(text: str, message: str) -> None:
    """Each malformed new key is a one-line error naming the key."""
    with pytest.raises(UsageError) as e:
        parse_contract(text, fmt="toml")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_endpoint_example_checks_the_example_stream() -> None:
    """The example endpoint contract holds on the example stream with its record."""
    body = b"".join(sse_events()).replace(
        b'"message_id":"m_0193"', b'"message_id":"m_0193","record_version":3'
    )
    assert check(body, contract=ENDPOINT, record=ROW) == []
    (v,) = check(body, contract=ENDPOINT, record={**ROW, "record_version": 4})
    assert v.rule == "contract.record" and "/record_version = 3" in v.message
