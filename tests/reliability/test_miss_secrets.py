"""No secret-named value in a miss explanation: stderr and the 500 body (issue 28, item 5).

``replayproxy replay`` serves a cassette to httpx requests that differ from the recording in an
``api_key`` member, a ``password`` inside an object only the request has, a ``token`` query
parameter, and a field redacted with ``--redact-body-field``: every difference is explained,
no value of them is printed, in both the base-URL and the proxy shell.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Request
from replayproxy.testing._builders import cassette, interaction

EXE = str(Path(sys.executable).with_name("replayproxy"))
SECRETS = ["MISS-api-key-0201", "MISS-password-0202", "MISS-token-0203", "MISS-ssn-0204"]

_CLIENT = """
import json, os, sys, httpx
proxy = os.environ.get("HTTP_PROXY")
base = os.environ.get("REPLAYPROXY_URL") or "http://api.example"
keys = json.loads(os.environ["SECRETS"])
body = {"model": "m", "api_key": keys[0], "login": {"user": "bob", "password": keys[1]},
        "profile": {"ssn": keys[3]}}
with httpx.Client(proxy=proxy, timeout=20) as c:
    r = c.post(base + "/v1/chat", params={"token": keys[2]}, json=body)
sys.stdout.write(json.dumps({"status": r.status_code, "body": r.text}))
"""


@pytest.mark.parametrize("shell", ["base-url", "proxy"])
def test_a_miss_explanation_prints_no_secret(tmp_path: Path, shell: str) -> None:
    """Each secret differs from the recording; stderr and the 500 body name where, not what."""
    recorded = Request(
        "POST",
        "http://api.example/v1/chat?token=recorded-token",
        body=json.dumps({"model": "m", "api_key": "recorded-key"}).encode(),
    )
    path = tmp_path / "c.cassette"
    store.save(path, cassette(interaction(request=recorded)))
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["SECRETS"] = json.dumps(SECRETS)
    where = ["--upstream", "http://api.example"] if shell == "base-url" else []
    run = subprocess.run(
        [EXE, "replay", str(path), *where, "--listen", "127.0.0.1:0",
         "--confdir", str(tmp_path / "conf"), "--redact-body-field", "/profile/ssn",
         "--", sys.executable, "-c", _CLIENT],
        capture_output=True, text=True, timeout=90, env=env,
    )  # fmt: skip
    assert run.returncode == 1 and "unmatched" in run.stderr, run.stderr
    answer = json.loads(run.stdout.splitlines()[-1])
    assert answer["status"] == 500
    for text, name in ((run.stderr, "stderr"), (answer["body"], "the 500 body")):
        leaked = [s for s in SECRETS if s in text]
        assert not leaked, f"{name} holds {leaked}: {text}"
    explained = json.loads(answer["body"])["error"]["message"]
    for part in ("body at /api_key", "body at /login", "body at /profile", "query: recorded"):
        assert part in explained, explained
    assert '"user": "bob"' in explained  # what is not a secret is still shown
