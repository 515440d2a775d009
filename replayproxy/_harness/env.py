"""The environment of a client behind replayproxy: proxy variables, CA bundles, base URL.

Used by the CLI for a wrapped ``-- COMMAND`` (:func:`child_env`) and by the Python API and the
pytest plugin for the test process itself (:func:`patched_environ`). No mitmproxy, no click.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit

__all__ = ["CA_ENV_VARS", "NODE_PROXY_ENV", "PROXY_ENV_VARS", "child_env", "patched_environ"]

PROXY_ENV_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
"""Set to the proxy URL for a wrapped command in forward mode."""

CA_ENV_VARS = (
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "AWS_CA_BUNDLE",
)
"""Set to mitmproxy's CA certificate for a wrapped command in forward mode: OpenSSL-based
clients (httpx, the openai/anthropic SDKs, Python ``ssl``), requests, curl, Node, boto3."""

NODE_PROXY_ENV = {"NODE_USE_ENV_PROXY": "1"}
"""Set in forward mode: Node's built-in ``fetch`` (which the openai and anthropic Node SDKs
use) ignores ``HTTPS_PROXY`` unless this is set (honoured from Node 24 and 22.21; older Node
ignores it, see docs/guides/clients.md)."""

_NO_PROXY_VARS = ("NO_PROXY", "no_proxy")


def child_env(
    proxy_url: str,
    *,
    forward: bool,
    ca_cert: str | os.PathLike[str] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for a command run behind the proxy.

    Both modes: ``REPLAYPROXY_URL=proxy_url``.

    Forward mode: ``HTTP_PROXY``/``HTTPS_PROXY`` and their lower-case twins point at the
    proxy; ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE``,
    ``NODE_EXTRA_CA_CERTS``, ``AWS_CA_BUNDLE`` at its CA; ``NODE_USE_ENV_PROXY=1`` makes Node's
    ``fetch`` (Node 24, 22.21+) use the proxy; ``NO_PROXY``/``no_proxy`` are set to
    ``""`` so that an inherited bypass list (often ``localhost,127.0.0.1``) does not route
    loopback or internal hosts around the proxy. (httpx, requests and curl 7.88 do not bypass
    proxies for loopback on their own; only ``NO_PROXY`` makes them.)

    Reverse mode: clients use ``REPLAYPROXY_URL`` as their base URL, so the proxy's host is
    added to ``NO_PROXY``/``no_proxy``: an inherited ``HTTP_PROXY`` must not intercept it.
    """
    env = dict(os.environ if base is None else base)
    env["REPLAYPROXY_URL"] = proxy_url
    if forward:
        for name in PROXY_ENV_VARS:
            env[name] = proxy_url
        if ca_cert is not None:
            for name in CA_ENV_VARS:
                env[name] = os.fspath(ca_cert)
        for name in _NO_PROXY_VARS:
            env[name] = ""
        env.update(NODE_PROXY_ENV)
    else:
        host = urlsplit(proxy_url).hostname or "127.0.0.1"
        for name in _NO_PROXY_VARS:
            entries = [e for e in env.get(name, "").split(",") if e.strip()]
            if host not in entries:
                entries.append(host)
            env[name] = ",".join(entries)
    return env


@contextlib.contextmanager
def patched_environ(env: Mapping[str, str]) -> Iterator[None]:
    """Set ``env`` in ``os.environ`` for the ``with`` block, then restore what was there."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
