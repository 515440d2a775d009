"""VCR.py's side of the peer comparison: httpx under ``vcr.use_cassette``, in the peers' venv.

VCR.py replays inside the client process (it patches httpx), so it cannot be measured from
outside like a server: this script is the client. It is run with the peers' Python
(``_peer_tools.py``), never imported by the benchmark.

Usage: ``python _vcr_client.py CASSETTE URL BODY_FILE record|replay RUNS``. ``record`` sends the
request once to ``URL`` (the floor server, at recorded speed) and writes the VCR cassette;
``replay`` replays it ``RUNS`` times without any network. Prints one JSON object per run:
``{"t_send": ns, "reads": [[t_ns, n], ...], "body": base64, "error": str}``, timestamps from
``time.monotonic_ns`` (CLOCK_MONOTONIC, comparable with the benchmark's).
"""

from __future__ import annotations

import base64
import json
import sys
import time


def main() -> None:
    import httpx
    import vcr

    cassette, url, body_file, mode, runs = sys.argv[1:6]
    body = open(body_file, "rb").read()  # noqa: SIM115 - a one-shot script
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    record = mode == "record"
    with (
        vcr.use_cassette(
            cassette,
            record_mode="all" if record else "none",
            match_on=["method", "path", "query", "body"],
            allow_playback_repeats=True,  # the same recorded request is replayed RUNS times
        ),
        httpx.Client(trust_env=False, timeout=60) as client,
    ):
        for _ in range(1 if record else int(runs)):
            reads: list[list[int]] = []
            data, error = b"", ""
            t_send = time.monotonic_ns()
            try:
                with client.stream("POST", url, content=body, headers=headers) as r:
                    for chunk in r.iter_raw():
                        reads.append([time.monotonic_ns(), len(chunk)])
                        data += chunk
                    if r.status_code != 200:
                        error = f"HTTP {r.status_code}"
            except Exception as e:  # reported, not fatal: the row says why
                error = f"{type(e).__name__}: {e}"
            body64 = base64.b64encode(data).decode()
            doc = {"t_send": t_send, "reads": reads, "body": body64, "error": error}
            print(json.dumps(doc), flush=True)


if __name__ == "__main__":
    main()
