"""An example project for the fault-matrix tests: two readers of an Anthropic stream, one
naive, one correct, each tested under the matrix the environment names (in base-URL mode, or
through the proxy with ``RP_MODE=proxy``); and the runner.

The test body is the same for both readers, as a user's would be: under an ``incomplete`` cell
it expects the reader to raise, otherwise to return the recorded text. The naive reader treats
a closed connection as the end of the stream (it swallows the transport error and never asks
for ``message_stop``); the correct one raises :class:`IncompleteStream` unless ``message_stop``
arrived. ``RP_BROKEN=1`` turns the correct reader naive (a planted regression).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.pytest_plugin.project import run

READERS = """
import json
import os

import httpx
import pytest

from replayproxy.testing._streams import STREAMS, expected_text

UPSTREAM = os.environ["RP_UPSTREAM"]
PROXY_MODE = os.environ.get("RP_MODE", "base") == "proxy"
MATRIX = os.environ.get("RP_MATRIX", "cuts")
MATRIX = MATRIX.split(";") if ";" in MATRIX else MATRIX
EXPECTED = expected_text(STREAMS["anthropic-text"])
BODY = {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True,
        "messages": [{"role": "user", "content": "Say hi"}]}

MODE = {} if PROXY_MODE else {"upstream": UPSTREAM}
pytestmark = pytest.mark.replayproxy(matrix=MATRIX, **MODE)


class IncompleteStream(Exception):
    pass


def read(url, naive):
    text, done = [], False
    try:
        with httpx.stream("POST", url + "/v1/messages", json=BODY, timeout=10) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    data = json.loads(line[6:])
                    if data.get("type") == "content_block_delta":
                        text.append(data["delta"].get("text", ""))
                    done = done or data.get("type") == "message_stop"
    except httpx.TransportError as e:
        if not naive:
            raise IncompleteStream(f"connection lost: {e}") from e
    if not done and not naive:
        raise IncompleteStream("the stream ended without message_stop")
    return "".join(text)


def check(replayproxy, naive):
    url = UPSTREAM if PROXY_MODE else replayproxy.url
    if replayproxy.cell is not None and replayproxy.cell.outcome == "incomplete":
        with pytest.raises(IncompleteStream):
            read(url, naive)
    else:
        assert read(url, naive) == EXPECTED


def test_naive_reader(replayproxy):
    check(replayproxy, naive=True)


def test_correct_reader(replayproxy):
    check(replayproxy, naive=os.environ.get("RP_BROKEN") == "1")
"""


def write_readers(pytester: pytest.Pytester, source: str = READERS) -> Path:
    """Write the readers' test module (``test_readers.py``)."""
    return pytester.makepyfile(test_readers=source)


def run_matrix(
    pytester: pytest.Pytester,
    *args: str,
    upstream: str,
    matrix: str = "cuts",
    mode: str = "base",
    confdir: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> pytest.RunResult:
    """Run the project with ``RP_MATRIX`` (``;`` separates list items: the marker gets a list)."""
    return run(
        pytester, "-rs", *args, upstream=upstream, mode=mode, confdir=confdir,
        env={"RP_MATRIX": matrix, **(env or {})},
    )  # fmt: skip


def results(path: Path, *, durations: bool = False) -> list[dict[str, Any]]:
    """The results of a JSON matrix report, without their durations unless asked."""
    found: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["results"]
    if not durations:
        found = [{k: v for k, v in r.items() if k != "duration"} for r in found]
    return found


def clear_env(*names: str) -> None:
    """Drop variables an earlier inner run set (``isolated_env`` restores them afterwards)."""
    for name in names:
        os.environ.pop(name, None)
