"""A missed JSON body holding ``"\\ud800"`` (a lone surrogate, valid JSON, not UTF-8) is a miss
with its explanation, not ``replay failed ... UnicodeEncodeError`` (issue 28, item 11)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Request
from replayproxy._core.matching.matcher import Matcher, Miss
from replayproxy.testing._builders import cassette, interaction

EXE = str(Path(sys.executable).with_name("replayproxy"))
RECORDED = Request("POST", "http://api.example/v1/chat", body=b'{"model":"m","text":"x"}')
SURROGATES = b'{"model":"m","text":"\\ud800","\\udfff":1}'

_CLIENT = """
import json, os, sys, httpx
base = os.environ.get("REPLAYPROXY_URL") or "http://api.example"
body = os.environ["BODY"].encode()
with httpx.Client(proxy=os.environ.get("HTTP_PROXY"), timeout=20) as c:
    r = c.post(base + "/v1/chat", content=body, headers={"content-type": "application/json"})
sys.stdout.write(json.dumps({"status": r.status_code, "body": r.text}))
"""


def test_the_explanation_escapes_lone_surrogates() -> None:
    """Every text of the miss encodes as UTF-8; the surrogate is shown as ``\\ud800``."""
    miss = Matcher([interaction(request=RECORDED)]).match(
        Request("POST", RECORDED.url, body=SURROGATES)
    )
    assert isinstance(miss, Miss)
    for text in (miss.explain(), miss.one_line(), miss.short(), *miss.options):
        text.encode("utf-8")
    assert 'requested "\\ud800"' in miss.explain() and "/\\udfff" in miss.one_line()


@pytest.mark.parametrize("shell", ["base-url", "proxy"])
def test_a_surrogate_body_is_an_explained_miss(tmp_path: Path, shell: str) -> None:
    """Through both shells: a 500 with the explanation, ``unmatched`` on stderr, exit 1."""
    path = tmp_path / "c.cassette"
    store.save(path, cassette(interaction(request=RECORDED)))
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["BODY"] = SURROGATES.decode()
    where = ["--upstream", "http://api.example"] if shell == "base-url" else []
    run = subprocess.run(
        [EXE, "replay", str(path), *where, "--listen", "127.0.0.1:0",
         "--confdir", str(tmp_path / "conf"), "--", sys.executable, "-c", _CLIENT],
        capture_output=True, text=True, timeout=90, env=env,
    )  # fmt: skip
    assert run.returncode == 1 and "unmatched" in run.stderr, run.stderr
    assert "UnicodeEncodeError" not in run.stderr and "replay failed" not in run.stderr
    answer = json.loads(run.stdout.splitlines()[-1])
    assert answer["status"] == 500
    message = json.loads(answer["body"])["error"]["message"]
    assert "body at /text" in message and "\\ud800" in message, message
