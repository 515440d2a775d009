"""`python -m replayproxy.testing.simulator`: the subprocess entry point for CLI tests/scripts."""

from __future__ import annotations

import select
import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from replayproxy.testing import STREAMS

MODULE = [sys.executable, "-m", "replayproxy.testing.simulator"]


@contextmanager
def _running(*args: str) -> Iterator[str]:
    """Start the simulator subprocess, yield its URL, and always stop it by PID."""
    proc = subprocess.Popen([*MODULE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, "simulator did not announce itself"
        line = proc.stdout.readline().decode()
        assert line.startswith("listening on "), line
        yield line.removeprefix("listening on ").strip()
    finally:
        proc.terminate()
        try:
            assert proc.wait(10) == 0  # SIGTERM is a clean stop
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)


def test_subprocess_serves_http() -> None:
    """The entry point prints its URL (flushed) and serves the streams with default gaps."""
    with _running("--port", "0", "--gap-ms", "1") as url:
        assert url.startswith("http://127.0.0.1:")
        r = httpx.post(url + "/v1/messages", json={"stream": True})
        assert r.content == STREAMS["anthropic-text"].body


def test_subprocess_serves_https(
    ca: Any, tmp_path: Path, ssl_client_context: ssl.SSLContext
) -> None:
    """With --tls-cert/--tls-key it serves HTTPS that clients trusting the CA accept."""
    cert = ca.issue_cert("127.0.0.1", "localhost")
    chain, key = tmp_path / "chain.pem", tmp_path / "key.pem"
    chain.write_bytes(b"".join(pem.bytes() for pem in cert.cert_chain_pems))
    cert.private_key_pem.write_to_path(str(key))
    with _running("--tls-cert", str(chain), "--tls-key", str(key)) as url:
        assert url.startswith("https://127.0.0.1:")
        r = httpx.get(url + "/v1/models", verify=ssl_client_context)
        assert r.json()["object"] == "list"


def test_bad_arguments_give_one_line_error(tmp_path: Path) -> None:
    """Bad options exit 2 with one `error:` line, not a traceback."""
    missing = str(tmp_path / "missing.pem")
    cases = (
        ["--gap-ms", "soon"],
        ["--tls-cert", missing],
        ["--tls-cert", missing, "--tls-key", missing],
    )
    for args in cases:
        r = subprocess.run([*MODULE, *args], capture_output=True, timeout=30)
        assert r.returncode == 2
        lines = r.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr


def test_help_says_what_it_serves_and_how_to_make_a_certificate() -> None:
    """--help lists the routes and providers and the `python -m trustme` recipe."""
    out = subprocess.run([*MODULE, "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    for route in ("/v1/chat/completions", "/v1/responses", "/v1/messages",
                  ":streamGenerateContent", "/converse-stream"):  # fmt: skip
        assert route in out.stdout
    assert "python -m trustme" in out.stdout and "--tls-cert server.pem" in out.stdout


def test_the_help_certificate_recipe_works_as_written(tmp_path: Path) -> None:
    """`python -m trustme` then --tls-cert server.pem --tls-key server.key serves HTTPS that
    a client trusting client.pem accepts."""
    made = subprocess.run(
        [sys.executable, "-m", "trustme", "-q"], cwd=tmp_path, capture_output=True, timeout=60
    )
    assert made.returncode == 0, made.stderr
    cert, key = str(tmp_path / "server.pem"), str(tmp_path / "server.key")
    with _running("--tls-cert", cert, "--tls-key", key) as url:
        assert url.startswith("https://127.0.0.1:")
        r = httpx.get(
            url + "/v1/models",
            verify=ssl.create_default_context(cafile=str(tmp_path / "client.pem")),
        )
        assert r.status_code == 200
