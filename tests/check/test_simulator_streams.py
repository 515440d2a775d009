"""The simulator's framed provider streams (replayproxy.testing._streams) pass the checker."""

from __future__ import annotations

import pytest

streams = pytest.importorskip("replayproxy.testing._streams")

from replayproxy._errors import UsageError  # noqa: E402
from replayproxy.checking import check  # noqa: E402


def _ctype(stream: object) -> str:
    return dict(stream.headers)[b"content-type"].decode()  # type: ignore[attr-defined]


SSE = [s for s in streams.STREAMS.values() if not _ctype(s).startswith("application/json")]
JSON = [s for s in streams.STREAMS.values() if _ctype(s).startswith("application/json")]


@pytest.mark.parametrize("stream", SSE, ids=lambda s: s.name)
def test_simulator_streams_have_no_errors(stream: object) -> None:
    """Every stream the simulator serves (SSE or event-stream) passes, its provider detected
    from its path and content type."""
    url = "https://provider.example" + stream.path.replace("{model}", "m")  # type: ignore[attr-defined]
    violations = check(stream.events, url=url, content_type=_ctype(stream))  # type: ignore[attr-defined]
    assert [v for v in violations if v.severity == "error"] == []


@pytest.mark.parametrize("stream", JSON, ids=lambda s: s.name)
def test_json_bodies_are_not_streams(stream: object) -> None:
    """A JSON answer is not checked as a stream: the usage error says it is not one."""
    url = "https://provider.example" + stream.path  # type: ignore[attr-defined]
    with pytest.raises(UsageError, match="'application/json' is not an event stream"):
        check(stream.body, url=url, content_type="application/json")  # type: ignore[attr-defined]
