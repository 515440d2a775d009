"""Record modes (VCR.py's table) and the replay option table (pure)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.faults import FaultSpec
from replayproxy._core.replay.cassette_write import CassetteWrite
from replayproxy._core.replay.options import (
    OPTIONS,
    RECORD_OPTIONS,
    REPLAY_OPTIONS,
    settings_from,
)
from replayproxy._core.replay.record_mode import RecordMode, parse_record_mode, policy_for
from replayproxy._errors import FaultSpecError, UsageError


@pytest.mark.parametrize(
    ("mode", "exists", "replay", "forward", "write"),
    [
        ("none", False, True, False, None),
        ("none", True, True, False, None),
        ("once", False, False, True, CassetteWrite.NEW),
        ("once", True, True, False, None),
        ("new_episodes", False, False, True, CassetteWrite.NEW),
        ("new_episodes", True, True, True, CassetteWrite.APPEND),
        ("all", False, False, True, CassetteWrite.OVERWRITE),
        ("all", True, False, True, CassetteWrite.OVERWRITE),
        ("rewrite", False, False, True, CassetteWrite.OVERWRITE),
        ("rewrite", True, False, True, CassetteWrite.OVERWRITE),
    ],
)
def test_policy_follows_vcr_table(
    mode: str, exists: bool, replay: bool, forward: bool, write: CassetteWrite | None
) -> None:
    """Each mode replays, forwards and opens the file as VCR.py's record modes do."""
    policy = policy_for(RecordMode(mode), exists)
    assert (policy.replay, policy.forward_misses, policy.write_mode) == (replay, forward, write)
    assert policy.records == (write is not None)
    assert policy.replaces == (mode == "rewrite")  # only rewrite records into a temporary file


def test_parse_record_mode_accepts_dashes_and_case_and_names_choices() -> None:
    """`New-Episodes` is new_episodes; a bad mode lists the five choices in one line."""
    assert parse_record_mode("New-Episodes") is RecordMode.NEW_EPISODES
    assert parse_record_mode("REWRITE") is RecordMode.REWRITE
    with pytest.raises(UsageError, match="none, once, new_episodes, all, rewrite, got 'some'"):
        parse_record_mode("some")


def test_every_option_has_distinct_names_in_every_interface() -> None:
    """No two options (replay and record groups) share a CLI flag, mitmproxy name, pytest flag
    or ini key; the pytest names are prefixed so they never clash with pytest-recording's
    (--record-mode)."""
    for attr in ("name", "cli_flag", "mitm_name", "pytest_flag", "ini_name"):
        values = [getattr(o, attr) for o in OPTIONS]
        assert len(set(values)) == len(values), attr
    assert all(o.pytest_flag.startswith("--replayproxy-") for o in OPTIONS)
    # The recorder's replayproxy_write_mode (new/append/overwrite) is not in the table.
    assert "replayproxy_write_mode" not in {o.mitm_name for o in OPTIONS}
    assert [o.name for o in OPTIONS] == [o.name for o in (*REPLAY_OPTIONS, *RECORD_OPTIONS)]


def test_settings_from_builds_match_options_faults_and_mode() -> None:
    """Values from any shell become one validated ReplaySettings."""
    s = settings_from(
        {
            "record_mode": "once",
            "speed": "2",
            "faults": ["truncate:events=1"],
            "ignore_query": ("api-version",),
            "ignore_body_field": "/user\n/metadata",  # an ini linelist arrives as lines
            "allow_repeats": True,
        }
    )
    assert s.record_mode is RecordMode.ONCE
    assert s.speed == 2.0
    assert [f.name for f in s.faults] == ["truncate"]
    assert isinstance(s.faults[0], FaultSpec)
    assert s.match.ignore_query == frozenset({"api-version"})
    assert s.match.ignore_body_fields == ("/user", "/metadata")
    assert s.match.allow_repeats and not s.match.match_host
    assert settings_from({}) == settings_from({o.name: o.default for o in OPTIONS})


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        ({"speed": "-1"}, UsageError, "speed must be a finite number >= 0"),
        ({"speed": "fast"}, UsageError, "speed must be a number, got 'fast'"),
        ({"faults": ["nope"]}, FaultSpecError, "nope"),
        ({"record_mode": "sometimes"}, UsageError, "record mode must be one of"),
        ({"cassete": "x"}, UsageError, "unknown option 'cassete'"),
    ],
)
def test_settings_from_rejects_bad_values_in_one_line(
    values: dict[str, object], error: type[Exception], message: str
) -> None:
    """A bad value is a one-line error naming what is wrong."""
    with pytest.raises(error, match=message) as info:
        settings_from(values)
    assert "\n" not in str(info.value)


@given(st.text())
def test_parse_record_mode_never_raises_anything_but_usage_error(text: str) -> None:
    """Any text is a mode or a UsageError, never another exception."""
    with contextlib.suppress(UsageError):
        assert parse_record_mode(text) in set(RecordMode)
