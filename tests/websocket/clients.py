"""Realtime clients for the WebSocket tests: the openai SDK's and the `websockets` library's.

Each returns what it received as ``(seconds since the client's last send, event)`` pairs, so
tests can compare server timing relative to the client message answered. Run as a script
(``python -m tests.websocket.clients BASE_URL``) it prints that as JSON, for the CLI tests
(``replayproxy record ... -- python -m tests.websocket.clients``).
"""

from __future__ import annotations

import json
import os
import ssl as _ssl
import sys
import time
from typing import Any

import openai
from websockets.sync.client import connect

Received = list[tuple[float, Any]]

USER_ITEM = {
    "type": "message",
    "role": "user",
    "content": [{"type": "input_text", "text": "Say hello."}],
}


def _forward_tls() -> dict[str, Any]:
    """In forward mode (wss:// through the proxy), the SDK's sync `websockets` client capped at
    TLS 1.2, trusting ``SSL_CERT_FILE``: that client's reader thread can swallow the upgrade
    request when a TLS 1.3 ticket arrives (see tests/replay/helpers.ws_client_tls)."""
    cafile = os.environ.get("SSL_CERT_FILE")
    if not cafile:
        return {}
    ctx = _ssl.create_default_context(cafile=cafile)
    ctx.maximum_version = _ssl.TLSVersion.TLSv1_2
    return {"websocket_connection_options": {"ssl": ctx}}


def openai_session(base_url: str | None = None, *, timeout: float = 10.0) -> Received:
    """session.update, conversation.item.create, response.create through the openai SDK's
    Realtime client, until response.done (or the server closes)."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-test-not-a-key", max_retries=0)
    out: Received = []
    tls = _forward_tls() if base_url is None else {}
    with client.realtime.connect(model="gpt-realtime", **tls) as conn:

        def receive(since: float) -> None:
            # Received first, then timed: a tuple's items are evaluated in order, and timing
            # before recv() measured the send call instead of the server's delay.
            event = conn.recv()
            out.append((time.monotonic() - since, event.model_dump(mode="json", warnings=False)))

        receive(time.monotonic())
        last = time.monotonic()
        conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        receive(last)
        last = time.monotonic()
        conn.conversation.item.create(item=USER_ITEM)  # type: ignore[arg-type]
        for _ in range(2):
            receive(last)
        last = time.monotonic()
        conn.response.create()
        for event in conn:
            out.append((time.monotonic() - last, event.model_dump(mode="json", warnings=False)))
            if event.type == "response.done":
                break
    return out


def websockets_session(
    url: str, *, proxy: str | None = None, ssl: Any = None, event_id: str = "evt_client_1"
) -> Received:
    """The same conversation with the `websockets` library (sync client), raw JSON events."""
    out: Received = []
    kwargs: dict[str, Any] = {"proxy": proxy, "open_timeout": 10}
    if ssl is not None:
        kwargs["ssl"] = ssl
    with connect(url, **kwargs) as ws:
        last = time.monotonic()

        def recv() -> Any:
            raw = ws.recv(timeout=10)
            out.append((time.monotonic() - last, json.loads(raw)))
            return out[-1][1]

        recv()
        last = time.monotonic()
        config = {"type": "realtime", "output_modalities": ["text"]}
        ws.send(json.dumps({"type": "session.update", "event_id": event_id, "session": config}))
        recv()
        last = time.monotonic()
        ws.send(json.dumps({"type": "conversation.item.create", "item": USER_ITEM}))
        recv()
        recv()
        last = time.monotonic()
        ws.send(json.dumps({"type": "response.create"}))
        while recv()["type"] != "response.done":
            pass
    return out


if __name__ == "__main__":
    # No argument: base URL from REPLAYPROXY_URL (reverse mode, as `replayproxy record/replay
    # --upstream ... -- COMMAND` sets it); --forward: the SDK's default https://api.openai.com
    # through HTTPS_PROXY and the CA in SSL_CERT_FILE (forward mode).
    arg = sys.argv[1] if len(sys.argv) > 1 else None
    base = None if arg == "--forward" else (arg or os.environ["REPLAYPROXY_URL"] + "/v1")
    json.dump(openai_session(base), sys.stdout)
