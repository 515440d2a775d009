"""The record group of the option table (pure): settings_from builds the recording's redactor,
and every error names the option as the caller spells it."""

from __future__ import annotations

import dataclasses
from dataclasses import fields
from typing import Any

import pytest

from replayproxy._core.redaction.secrets import DEFAULT_HEADERS, NO_REDACTION
from replayproxy._core.replay.option_def import GROUP_FRONTS, Front, Group
from replayproxy._core.replay.options import (
    OPTIONS,
    RECORD_OPTIONS,
    OptionDef,
    ReplaySettings,
    cli_words,
    mitm_words,
    option,
    options_for,
    settings_from,
)
from replayproxy._errors import FaultSpecError, UsageError


def test_record_options_build_the_redactor_and_tls_setting() -> None:
    """Extra header / query names (lower-cased) and pointers join the defaults; no_redact
    keeps everything; record_tls_failures is carried as given."""
    s = settings_from(
        {
            "redact_header": ["X-Custom-Key"],
            "redact_query": "Session\nuser_id",  # an ini linelist arrives as lines
            "redact_body_field": ("/user",),
            "record_tls_failures": True,
        }
    )
    assert s.record.redactor.headers == DEFAULT_HEADERS | {"x-custom-key"}
    assert {"session", "user_id"} <= s.record.redactor.query_params
    assert s.record.redactor.body_fields == ("/user",)
    assert s.record.tls_failures
    assert settings_from({"no_redact": True}).record.redactor == NO_REDACTION
    assert settings_from({"no_redact": False, "redact_header": ["x"]}).record.redactor != (
        NO_REDACTION
    )
    assert settings_from({}).record == settings_from({o.name: o.default for o in OPTIONS}).record


@pytest.mark.parametrize(
    ("values", "where", "error", "message"),
    [
        ({"redact_header": ["a b"]}, cli_words, UsageError,
         "option --redact-header: invalid name to redact: 'a b'"),
        ({"redact_query": [""]}, mitm_words, UsageError,
         "option replayproxy_redact_query: invalid name to redact: ''"),
        ({"redact_header": ["x:y"]}, mitm_words, UsageError,
         "option replayproxy_redact_headers: invalid name to redact: 'x:y'"),
        ({"redact_body_field": ["user"]}, cli_words, UsageError,
         "option --redact-body-field: invalid body field to redact: JSON pointer must start "
         "with '/': 'user'"),
        ({"redact_body_field": [3]}, cli_words, UsageError,
         "option --redact-body-field: invalid body field to redact: 3 is not a JSON pointer"),
        # These parsers name the option themselves: their messages are as they always were.
        ({"faults": ["nope"]}, cli_words, FaultSpecError, "unknown fault 'nope'"),
        ({"speed": "x"}, mitm_words, UsageError, "speed must be a number, got 'x'"),
        ({"record_mode": "x"}, cli_words, UsageError, "record mode must be one of none, "),
        ({"redact_headers": ["x"]}, lambda n: f"keyword {n!r}", UsageError,
         "unknown keyword 'redact_headers' (known: record_mode, "),
    ],
)  # fmt: skip
def test_errors_name_the_option_as_the_caller_spells_it(
    values: dict[str, object], where: object, error: type[Exception], message: str
) -> None:
    """A bad value is one line of its own class, starting with the option as `where` names
    it (a flag, a mitmproxy option, a keyword)."""
    with pytest.raises(error) as info:
        settings_from(values, where=where)  # type: ignore[arg-type]
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_groups_decide_the_front_ends() -> None:
    """The record group is taken everywhere something records, never by the engine alone;
    record_mode is not taken by the engine either; the replay CLI takes both groups."""
    assert all(o.group is Group.RECORD for o in RECORD_OPTIONS)
    assert {o.name for o in RECORD_OPTIONS} == {
        "redact_header", "redact_query", "redact_body_field", "no_redact", "record_tls_failures",
    }  # fmt: skip
    assert Front.SERVER not in GROUP_FRONTS[Group.RECORD]
    assert Front.SERVER not in option("record_mode").fronts
    assert Front.MATRIX_CLI not in GROUP_FRONTS[Group.RECORD]
    assert not {Front.MATRIX_CLI} & (option("record_mode").fronts | option("faults").fronts)
    assert options_for(Front.RECORD_CLI) == RECORD_OPTIONS
    assert options_for(Front.REPLAY_CLI) == OPTIONS
    assert options_for(Front.PYTEST) == OPTIONS == options_for(Front.PYTHON)


@pytest.mark.parametrize(("opt", "other"), [(o, other) for o in OPTIONS for other in o.conflicts])
def test_options_that_contradict_each_other_are_one_line_naming_both(
    opt: OptionDef, other: str
) -> None:
    """Two given options a row declares contradictory are refused in one line naming both as
    the caller spells them; either alone, or one left at its default, is accepted."""
    both = {opt.name: opt.example, other: option(other).example}
    with pytest.raises(UsageError) as info:
        settings_from(both, where=cli_words)
    text = str(info.value)
    assert text == f"{cli_words(opt.name)} and {cli_words(other)} contradict each other; give one"
    settings_from({opt.name: opt.example})
    settings_from({other: option(other).example})
    settings_from({opt.name: opt.default, other: option(other).example})


def test_conflicts_name_options_of_the_table_once() -> None:
    """Each declared conflict names another option, and each pair is declared on one row."""
    pairs = [(o.name, other) for o in OPTIONS for other in o.conflicts]
    assert pairs, "the no_redact row declares its conflicts"
    assert all(other in {o.name for o in OPTIONS} and other != name for name, other in pairs)
    assert len({frozenset(p) for p in pairs}) == len(pairs)


def test_each_row_sets_its_own_field_of_the_settings() -> None:
    """Every row's ``setting`` names a field of ReplaySettings (or of one of its parts), no two
    rows the same one, and every field but the in-process hooks and the derived redactor is
    set by some row, which puts its parsed value there."""
    settable: set[tuple[str, ...]] = set()
    for f in fields(ReplaySettings):
        part = getattr(ReplaySettings(), f.name)
        if dataclasses.is_dataclass(part):
            settable |= {(f.name, g.name) for g in fields(part) if g.init and g.name != "hooks"}
        else:
            settable.add((f.name,))
    paths = [o.setting_path for o in OPTIONS]
    assert len(set(paths)) == len(paths)
    assert set(paths) == settable
    for opt in OPTIONS:
        value: Any = settings_from({opt.name: opt.example})
        for part in opt.setting_path:
            value = getattr(value, part)
        assert value == opt.parse(opt.example), opt.name
