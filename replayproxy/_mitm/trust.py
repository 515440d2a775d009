"""Upstream trust for the mitmproxy shell: the default CAs plus one of the user's."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from replayproxy._errors import UsageError

__all__ = ["trust_bundle"]


@contextlib.contextmanager
def trust_bundle(extra_ca: str | None) -> Iterator[str | None]:
    """A PEM bundle of the default CAs (certifi, as mitmproxy uses) plus ``extra_ca``.

    mitmproxy's ``ssl_verify_upstream_trusted_ca`` *replaces* its default trust store; adding
    the user's CA to it instead keeps public hosts working in the same forward-mode session.
    """
    if extra_ca is None:
        yield None
        return
    try:
        pem = Path(extra_ca).read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read --upstream-ca {extra_ca}: {e.strerror}") from None
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        raise UsageError(f"--upstream-ca {extra_ca}: not a PEM certificate file")
    import certifi

    bundle = Path(certifi.where()).read_bytes() + b"\n" + pem
    fd, name = tempfile.mkstemp(prefix="replayproxy-upstream-ca-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(bundle)
        yield name
    finally:
        Path(name).unlink(missing_ok=True)
