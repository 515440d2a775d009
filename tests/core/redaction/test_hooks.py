"""RecordHooks: VCR.py's before_record_request / before_record_response on replayproxy's own
types; None drops the interaction, a callable that raises or returns the wrong type is a
one-line CassetteError naming it, a non-callable a UsageError."""

from __future__ import annotations

import dataclasses

import pytest

from replayproxy._core.cassette.model import Interaction, Request
from replayproxy._core.redaction.hooks import RecordHooks
from replayproxy._errors import CassetteError, UsageError
from replayproxy.testing import interaction

ONE = interaction([b"data: 1\n\n"])


def test_no_hooks_keep_the_interaction() -> None:
    """Without callables the interaction is returned as it is."""
    assert RecordHooks().apply(ONE) is ONE


def test_request_hook_edits_and_response_hook_sees_the_edit() -> None:
    """The request hook's result is what the response hook gets, and what is kept."""
    seen: list[str] = []

    def req(r: Request) -> Request:
        return dataclasses.replace(r, url=r.url + "?edited=1")

    def resp(i: Interaction) -> Interaction:
        seen.append(i.request.url)
        return dataclasses.replace(i, faults=("marked",))

    got = RecordHooks(req, resp).apply(ONE)
    assert got is not None and got.request.url.endswith("?edited=1") and got.faults == ("marked",)
    assert seen == [got.request.url]


@pytest.mark.parametrize("which", ["before_record_request", "before_record_response"])
def test_none_drops_the_interaction(which: str) -> None:
    """Either callable returning None drops it."""
    assert RecordHooks(**{which: lambda _: None}).apply(ONE) is None


def test_a_failing_or_wrongly_typed_hook_is_one_line_naming_it() -> None:
    """A raise and a wrong return type each name the callable and say nothing was recorded."""

    def scrub(r: Request) -> Request:
        raise KeyError("x")

    with pytest.raises(CassetteError, match=r"scrub raised KeyError: 'x'; the interaction was"):
        RecordHooks(before_record_request=scrub).apply(ONE)
    hooks = RecordHooks(before_record_response=lambda i: i.request)  # type: ignore[arg-type,return-value]
    with pytest.raises(CassetteError, match="returned Request, not Interaction or None"):
        hooks.apply(ONE)


def test_a_non_callable_is_a_usage_error() -> None:
    """A string where a callable belongs is refused when the hooks are built."""
    with pytest.raises(UsageError, match="before_record_request must be a callable or None"):
        RecordHooks(before_record_request="scrub")  # type: ignore[arg-type]
