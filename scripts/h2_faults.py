"""What each fault becomes over HTTP/2 in forward mode, per client: prints the Markdown table
of docs/guides/replay.md ("HTTP/2").

    .venv/bin/python scripts/h2_faults.py

One forward replay proxy per shell (the engine alone, as ``replayproxy replay`` runs; and
mitmproxy from ``build_stack`` with the origin in a child process, as a session that may
record runs it; ``--shell engine`` or ``--shell mitmproxy`` for one of them) serves an OpenAI
chat stream recorded as HTTP/2 (``cassettes/openai-chat-text``, its response marked
``HTTP/2.0``), once per fault, to: our own h2 client (every frame: the
RST_STREAM / GOAWAY code and the DATA frames before it), curl ``--http2``, httpx
``http2=True`` and, if ``go`` is installed, Go net/http (``ForceAttemptHTTP2``). Loopback only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from replayproxy import _store as store  # noqa: E402
from replayproxy._core.cassette.model import Cassette  # noqa: E402
from replayproxy._engine.server import ReplayServer  # noqa: E402
from replayproxy._engine.session import ReplaySession  # noqa: E402
from replayproxy._mitm.addons.replayer import Replayer  # noqa: E402
from replayproxy._mitm.embedded import EmbeddedProxy  # noqa: E402
from replayproxy._mitm.leaf_certs import LeafCerts  # noqa: E402
from replayproxy._mitm.stack import build_stack  # noqa: E402
from tests.replay.h2_peers import h2_get_through_proxy  # noqa: E402

HOST = "api.openai.com"  # never resolved: connection_strategy=lazy, the replayer refuses it
PATH = "/v1/chat/completions"
FAULTS = (
    "",
    "reset:events=5",
    "close:events=5",
    "truncate:events=5",
    "stall:events=5,for=0.3",
    "status:code=503",
    "error:events=5",
)
H2_CODES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 8: "CANCEL"}

GO_CLIENT = r"""
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	pem, _ := os.ReadFile(os.Args[1])
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: pool}}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	r, err := client.Get(os.Args[2])
	if err != nil {
		fmt.Printf("error before the body: %v\n", err)
		return
	}
	defer r.Body.Close()
	buf := make([]byte, 65536)
	reads, total := 0, 0
	for {
		n, err := r.Body.Read(buf)
		if n > 0 {
			reads++
			total += n
		}
		if err != nil {
			fmt.Printf("%s %d, %d reads, %d bytes, then %v\n",
				r.Proto, r.StatusCode, reads, total, err)
			return
		}
	}
}
"""


def h2_cassette() -> Cassette:
    """The OpenAI chat stream as a GET recorded over HTTP/2."""
    (recorded, *_) = store.load(ROOT / "cassettes" / "openai-chat-text.cassette").interactions
    assert recorded.response is not None
    request = replace(recorded.request, method="GET", url=f"https://{HOST}{PATH}", body=b"")
    response = replace(recorded.response, http_version="HTTP/2.0")
    return Cassette(interactions=(replace(recorded, request=request, response=response),))


def own_h2(proxy: EmbeddedProxy | ReplayServer) -> str:
    reply = h2_get_through_proxy(proxy.port, HOST, str(proxy.ca_cert), PATH, ping_after=True)
    out = f"{reply.alpn} {reply.status}, {len(reply.frames)} DATA frames, "
    if reply.reset is not None:
        out += f"RST_STREAM {H2_CODES.get(reply.reset, reply.reset)}"
    elif reply.goaway is not None:
        return out + f"GOAWAY {H2_CODES.get(reply.goaway, reply.goaway)}"
    else:
        out += "END_STREAM"
    return out + f"; connection {reply.after}"


def curl(proxy: EmbeddedProxy | ReplayServer) -> str:
    if shutil.which("curl") is None:
        return "(curl not installed)"
    cmd = ["curl", "-sS", "--http2", "-x", proxy.url, "--cacert", str(proxy.ca_cert)]
    cmd += ["--max-time", "10", "-o", "/dev/null", "-w", "%{http_version} %{http_code}"]
    done = subprocess.run([*cmd, f"https://{HOST}{PATH}"], capture_output=True, text=True)
    err = done.stderr.strip().replace("curl: ", "")
    return f"HTTP/{done.stdout} exit {done.returncode}" + (f": {err}" if err else "")


def httpx_client(proxy: EmbeddedProxy | ReplayServer) -> str:
    verify = ssl.create_default_context(cafile=str(proxy.ca_cert))
    chunks = 0
    try:
        with (
            httpx.Client(proxy=proxy.url, verify=verify, http2=True, timeout=10) as client,
            client.stream("GET", f"https://{HOST}{PATH}") as r,
        ):
            head = f"{r.http_version} {r.status_code}"
            for _ in r.iter_raw():
                chunks += 1
    except httpx.HTTPError as e:
        return f"{chunks} chunks, then {type(e).__name__}: {e}"
    return f"{head}, {chunks} chunks, no error"


def go_client(proxy: EmbeddedProxy | ReplayServer, binary: Path | None) -> str:
    if binary is None:
        return "(go not installed)"
    env = {**os.environ, "HTTPS_PROXY": proxy.url}
    done = subprocess.run(
        [str(binary), str(proxy.ca_cert), f"https://{HOST}{PATH}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=20,
    )
    return (done.stdout + done.stderr).strip()


def build_go(work: Path) -> Path | None:
    if shutil.which("go") is None:
        return None
    (work / "main.go").write_text(GO_CLIENT)
    env = {**os.environ, "GOCACHE": str(work / "cache"), "GO111MODULE": "off"}
    subprocess.run(["go", "build", "-o", "client", "main.go"], cwd=work, env=env, check=True)
    return work / "client"


def table(proxy: EmbeddedProxy | ReplayServer, use: Any, go: Path | None) -> None:
    """One Markdown table: every fault, every client, through ``proxy``."""
    cassette = h2_cassette()
    print("| fault | our h2 client (frames) | curl --http2 | httpx http2=True | Go |")
    print("|---|---|---|---|---|")
    for fault in FAULTS:
        cells = []
        for client in (own_h2, curl, httpx_client, lambda p: go_client(p, go)):
            use(ReplaySession(cassette, speed=0, faults=[fault] if fault else []))
            cells.append(client(proxy).replace("|", "\\|"))
        print(f"| `{fault or '(none)'}` | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shell", choices=("engine", "mitmproxy"), help="one shell only")
    shell = ap.parse_args().shell
    with tempfile.TemporaryDirectory() as tmp:
        go = build_go(Path(tmp))
        confdir = Path(tmp) / "conf"
        if shell in (None, "engine"):
            print("\nthe engine (replayproxy replay)\n")
            idle = ReplaySession(Cassette(), speed=0)
            with ReplayServer.for_session(idle, tls=LeafCerts(confdir)) as server:
                table(server, server.use, go)
        if shell in (None, "mitmproxy"):
            print("\nmitmproxy (a session that may record)\n")
            stack = build_stack(None, None, origin_process=True)
            replayer = stack.replayer
            assert isinstance(replayer, Replayer)
            with stack.proxy(confdir=confdir) as proxy:
                table(proxy, replayer.use, go)


if __name__ == "__main__":
    main()
