"""`replayproxy record`: environment of the wrapped command, signals, kill -9, errors, append."""

from __future__ import annotations

import json
import signal
import socket
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy._cli._common import NOTHING_RECORDED_EXIT_STATUS
from replayproxy._cli.addon_path import script_path
from replayproxy._core.cassette.model import EndKind
from replayproxy._errors import CassetteWarning
from replayproxy.testing import Behavior, Simulator

from .conftest import RecordProcess, clean_env, run_record
from .helpers import load_quiet

BODY = {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True, "messages": []}

PRINT_ENV = "import json, os; print(json.dumps(dict(os.environ)))"

Recorder = Callable[..., RecordProcess]


def _child_env(stdout: str) -> dict[str, str]:
    return json.loads(stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_forward_mode_child_env_and_exit_status(tmp_path: Path, confdir: Path) -> None:
    """Forward mode: the command gets proxy + CA variables, NO_PROXY emptied, its status kept."""
    cassette = tmp_path / "c.cassette"
    env = clean_env(NO_PROXY="localhost,127.0.0.1", no_proxy="localhost")
    script = PRINT_ENV + "; raise SystemExit(7)"
    done = run_record(
        ["--confdir", str(confdir), str(cassette), "--", sys.executable, "-c", script], env
    )
    context = f"stdout={done.stdout!r} stderr={done.stderr!r}"
    assert done.returncode == 7, context
    lines = done.stdout.splitlines()
    assert lines[0].startswith("listening on http://127.0.0.1:"), context
    proxy_url = lines[0].split()[-1]
    ca = str(confdir / "mitmproxy-ca-cert.pem")
    assert lines[1] == f"ca-cert {ca}", context
    child = _child_env(done.stdout)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "REPLAYPROXY_URL"):
        assert child[name] == proxy_url
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"):
        assert child[name] == ca
    assert child["NO_PROXY"] == child["no_proxy"] == ""
    assert "0 interactions recorded to" in done.stderr
    assert load_quiet(cassette).interactions == ()


def test_reverse_mode_child_env(tmp_path: Path, plain_sim: Simulator) -> None:
    """Reverse mode: no proxy variables; REPLAYPROXY_URL is the base URL and bypasses proxies.
    The command sent no request, so the run fails with the line saying so."""
    cassette = tmp_path / "c.cassette"
    env = clean_env(NO_PROXY="example.com", HTTPS_PROXY="http://corporate.invalid:3128")
    args = ["--upstream", plain_sim.url, str(cassette), "--", sys.executable, "-c", PRINT_ENV]
    done = run_record(args, env)
    assert done.returncode == NOTHING_RECORDED_EXIT_STATUS, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: nothing recorded to {cassette}: no request reached the proxy while the "
        "command ran (point its base URL at $REPLAYPROXY_URL)"
    )
    assert not any(line.startswith("ca-cert ") for line in done.stdout.splitlines())
    child = _child_env(done.stdout)
    assert child["REPLAYPROXY_URL"].startswith("http://127.0.0.1:")
    assert child["HTTPS_PROXY"] == "http://corporate.invalid:3128"  # untouched
    assert child["NO_PROXY"] == "example.com,127.0.0.1"
    assert child.get("SSL_CERT_FILE") == env.get("SSL_CERT_FILE")  # inherited, not replaced


def test_sigint_stops_cleanly_and_keeps_everything(
    tmp_path: Path, confdir: Path, plain_sim: Simulator, recorder_cli: Recorder
) -> None:
    """SIGINT: exit 0, summary on stderr, finished flows and the one in flight are on disk."""
    cassette = tmp_path / "c.cassette"
    proc = recorder_cli(["--confdir", str(confdir), str(cassette)])
    with httpx.Client(proxy=proc.url, timeout=10) as client:
        client.post(plain_sim.url + "/v1/messages", json=BODY)
        plain_sim.behavior = Behavior(hang_after=2)
        with client.stream("POST", plain_sim.url + "/v1/messages", json=BODY) as r:
            chunks = r.iter_raw()  # not `for ... break`: closing the iterator closes the socket
            got = b""
            while got.count(b"\n\n") < 2:
                got += next(chunks)
            proc.signal(signal.SIGINT)
            _out, err = proc.finish()
    assert proc.proc.returncode == 0, err
    assert err.strip().splitlines()[-1] == f"2 interactions recorded to {cassette}"
    first, in_flight = load_quiet(cassette).interactions
    assert first.end.kind is EndKind.COMPLETE
    assert in_flight.end.kind is EndKind.ERROR
    assert in_flight.response is not None and in_flight.response.body == got


def test_sigterm_with_command_stops_command_and_recorder(tmp_path: Path, confdir: Path) -> None:
    """SIGTERM is passed to the wrapped command; the recorder then exits with its status."""
    cassette = tmp_path / "c.cassette"
    script = "import sys, time; print('child up', flush=True); time.sleep(30)"
    proc = RecordProcess(
        ["--confdir", str(confdir), str(cassette), "--", sys.executable, "-c", script],
        clean_env(),
    )
    try:
        assert proc.proc.stdout is not None
        assert proc.proc.stdout.readline().strip() == "child up"
        proc.signal(signal.SIGTERM)
        _out, err = proc.finish(timeout=15)
    finally:
        proc.kill()
    assert proc.proc.returncode == 128 + signal.SIGTERM, err
    assert "0 interactions recorded to" in err


def test_kill_9_keeps_finished_interactions(
    tmp_path: Path, confdir: Path, plain_sim: Simulator, recorder_cli: Recorder
) -> None:
    """After kill -9 mid-stream, every finished interaction loads (at most a torn-tail warning)."""
    cassette = tmp_path / "c.cassette"
    proc = recorder_cli(["--confdir", str(confdir), str(cassette)])
    with httpx.Client(proxy=proc.url, timeout=10) as client:
        for _ in range(3):
            client.post(plain_sim.url + "/v1/messages", json=BODY).raise_for_status()
        client.get(plain_sim.url + "/v1/models").raise_for_status()
        plain_sim.behavior = Behavior(hang_after=2)
        with pytest.raises(httpx.HTTPError):  # noqa: SIM117
            with client.stream("POST", plain_sim.url + "/v1/messages", json=BODY) as r:
                for i, _chunk in enumerate(r.iter_raw()):
                    if i == 1:
                        proc.proc.kill()
                        proc.proc.wait(10)
    assert proc.proc.returncode == -signal.SIGKILL
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        interactions = store.load(cassette).interactions
    assert [i.end.kind for i in interactions] == [EndKind.COMPLETE] * 4
    assert all(issubclass(w.category, CassetteWarning) for w in caught)
    assert len(caught) <= 1


def test_unreachable_upstream_warns_and_records_no_response(tmp_path: Path) -> None:
    """An unreachable upstream: the client gets 502, stderr one warning line, no_response kept."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    cassette = tmp_path / "c.cassette"
    curl = 'curl -s -o /dev/null -w "%{http_code}" "$REPLAYPROXY_URL/v1/models"'
    done = run_record(["--upstream", dead, str(cassette), "--", "sh", "-c", curl], clean_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "502"
    warning_lines = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning_lines) == 1 and f"no response from {dead}/v1/models" in warning_lines[0]
    (interaction,) = load_quiet(cassette).interactions
    assert interaction.end.kind is EndKind.NO_RESPONSE


def test_append_and_overwrite(tmp_path: Path, plain_sim: Simulator) -> None:
    """--append adds to an existing cassette; --overwrite replaces it."""
    cassette = tmp_path / "c.cassette"
    curl = 'curl -s -o /dev/null "$REPLAYPROXY_URL/v1/models"'
    base = ["--upstream", plain_sim.url]
    for extra, expected in (([], 1), (["--append"], 2), (["--overwrite"], 1)):
        done = run_record([*base, *extra, str(cassette), "--", "sh", "-c", curl], clean_env())
        assert done.returncode == 0, done.stderr
        assert len(load_quiet(cassette).interactions) == expected


# -- errors: one line, exit status 2, nothing started ---------------------------------------


@pytest.fixture
def runner() -> Iterator[CliRunner]:
    yield CliRunner()


def _one_line_error(result: object) -> str:
    output = result.output  # type: ignore[attr-defined]
    assert result.exit_code == 2, output  # type: ignore[attr-defined]
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 or lines[0].startswith("Usage:"), output
    return lines[-1]


def test_existing_cassette_is_refused(runner: CliRunner, tmp_path: Path, confdir: Path) -> None:
    """A cassette that exists is an error without --append or --overwrite (file untouched)."""
    cassette = tmp_path / "c.cassette"
    store.save(cassette, store.Cassette())
    before = cassette.read_bytes()
    line = _one_line_error(
        runner.invoke(
            cli, ["record", "--listen", "127.0.0.1:0", "--confdir", str(confdir), str(cassette)]
        )
    )
    assert line.startswith("error: ") and "already exists" in line and str(cassette) in line
    assert cassette.read_bytes() == before


def test_append_to_corrupt_cassette_names_file_and_offset(
    runner: CliRunner, tmp_path: Path, confdir: Path
) -> None:
    """--append onto a corrupt cassette: one line naming the file and the byte offset."""
    cassette = tmp_path / "c.cassette"
    store.save(cassette, store.Cassette())
    good = cassette.read_bytes()
    cassette.write_bytes(good + b"\xc1garbage")
    args = [
        "record",
        "--listen",
        "127.0.0.1:0",
        "--confdir",
        str(confdir),
        "--append",
        str(cassette),
    ]
    line = _one_line_error(runner.invoke(cli, args))
    assert f"{cassette} at byte {len(good)}" in line


def test_port_in_use_is_one_line(runner: CliRunner, tmp_path: Path, confdir: Path) -> None:
    """A listen port already taken gives a one-line error naming it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        args = ["record", "--listen", f"127.0.0.1:{port}", "--confdir", str(confdir)]
        line = _one_line_error(runner.invoke(cli, [*args, str(tmp_path / "c.cassette")]))
    assert line == f"error: cannot listen on 127.0.0.1:{port}: address already in use"
    assert not (tmp_path / "c.cassette").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--append", "--overwrite"], "--append and --overwrite exclude each other"),
        (["--upstream", "ftp://x"], "invalid upstream 'ftp://x'"),
        (["--upstream", "https://"], "invalid upstream 'https://'"),
        (["--upstream", "https://api.example/v1"], "give only scheme://HOST[:PORT]"),
        (["--listen", "127.0.0.1:99999"], "the port must be 0-65535"),
        (["--listen", "nonsense"], "the port must be 0-65535"),
        (["--upstream-ca", "/nonexistent.pem"], "cannot read --upstream-ca /nonexistent.pem"),
        (["--redact-header", "bad name"], "invalid name to redact: 'bad name'"),
    ],
)
def test_bad_arguments_are_one_line(
    runner: CliRunner, tmp_path: Path, confdir: Path, args: list[str], expected: str
) -> None:
    """Bad arguments give a one-line error, not a traceback, and create no cassette."""
    cassette = tmp_path / "c.cassette"
    base = ["record", "--confdir", str(confdir)]
    if "--listen" not in args:
        base += ["--listen", "127.0.0.1:0"]
    line = _one_line_error(runner.invoke(cli, [*base, *args, str(cassette)]))
    assert expected in line
    assert not cassette.exists()


def test_missing_command_is_one_line(tmp_path: Path) -> None:
    """A wrapped command that does not exist gives a one-line error and exit status 2."""
    cassette = tmp_path / "c.cassette"
    done = run_record([str(cassette), "--", "no-such-command-xyz"], clean_env())
    assert done.returncode == 2
    assert "error: cannot run 'no-such-command-xyz'" in done.stderr
    assert "Traceback" not in done.stderr


def test_addon_path_prints_existing_scripts(runner: CliRunner) -> None:
    """`addon-path record|replay` prints the path of a script that exists."""
    for name in ("record", "replay"):
        result = runner.invoke(cli, ["addon-path", name])
        assert result.exit_code == 0
        assert Path(result.output.strip()) == script_path(name)
        assert script_path(name).is_file()
    assert runner.invoke(cli, ["addon-path", "nope"]).exit_code == 2


def test_tls_trust_problems_are_explained_on_stderr(
    tmp_path: Path, confdir: Path, ca_pem: Path, tls_sim: Simulator
) -> None:
    """An untrusted upstream suggests --upstream-ca and is not recorded (unless asked); a
    client not trusting mitmproxy is named."""
    cassette = tmp_path / "c.cassette"
    url = tls_sim.url + "/v1/models"
    script = f"curl -s -o /dev/null {url}; curl -s -o /dev/null --cacert {ca_pem} {url}; exit 0"
    done = run_record(
        ["--confdir", str(confdir), str(cassette), "--", "sh", "-c", script], clean_env()
    )
    assert done.returncode == NOTHING_RECORDED_EXIT_STATUS, done.stderr
    assert "none recorded" in done.stderr.strip().splitlines()[-1]
    assert (
        "warning: mitmproxy: Server TLS handshake failed. Certificate verify failed" in done.stderr
    )
    assert "warning: mitmproxy: Client TLS handshake failed." in done.stderr
    assert f"warning: cannot verify the TLS certificate of {url}" in done.stderr
    assert "pass --upstream-ca PEM" in done.stderr and "not recorded" in done.stderr
    assert "0 interactions recorded to" in done.stderr
    assert load_quiet(cassette).interactions == ()
    kept = tmp_path / "kept.cassette"
    done = run_record(
        ["--confdir", str(confdir), "--record-tls-failures", str(kept), "--",
         "sh", "-c", f"curl -s -o /dev/null {url}; exit 0"],
        clean_env(),
    )  # fmt: skip
    assert "recorded as no_response" in done.stderr
    (interaction,) = load_quiet(kept).interactions
    assert interaction.end.kind is EndKind.NO_RESPONSE
    assert "Certificate verify failed" in interaction.end.message
