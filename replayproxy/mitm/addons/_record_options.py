"""The recording addon's mitmproxy options: declared once, and the redactor they configure.

Kept apart from :mod:`~replayproxy.mitm.addons.recorder`, which holds the hooks that record
flows: this is configuration (what is declared, what is a valid name or pointer to redact),
and it changes for reasons of its own, such as a new secret to redact by default. The
cassette target is checked here too, before the proxy starts, so a bad path fails the start
with one line and creates nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mitmproxy import exceptions

from replayproxy.core.redaction.secrets import NO_REDACTION, Redactor
from replayproxy.errors import CassetteError, CassetteExistsError
from replayproxy.store import load

__all__ = ["RECORD_MODES", "OptionsError", "check_target", "declare_options", "redactor_from"]

RECORD_MODES = ("new", "append", "overwrite")

# mitmproxy 11's exception classes are untyped; keep mypy strict quiet on both versions.
OptionsError: Any = exceptions.OptionsError


def declare_options(loader: Any) -> None:
    """Declare the ``replayproxy_record*`` and redaction options on mitmproxy's loader."""
    loader.add_option("replayproxy_record", str, "", "Record every flow to this cassette file.")
    loader.add_option(
        "replayproxy_record_mode",
        str,
        "new",
        "new: refuse an existing cassette; append: add to it; overwrite: replace it.",
        choices=RECORD_MODES,
    )
    loader.add_option(
        "replayproxy_redact_headers",
        Sequence[str],
        [],
        "More header names whose values are redacted (authorization, x-api-key, "
        "api-key, x-goog-api-key, x-amz-security-token, ocp-apim-subscription-key, "
        "x-auth-token, proxy-authorization, cookie, set-cookie always are).",
    )
    loader.add_option(
        "replayproxy_redact_query",
        Sequence[str],
        [],
        "More URL query parameters whose values are redacted (key, api_key and "
        "access_token always are).",
    )
    loader.add_option(
        "replayproxy_redact_body_field",
        Sequence[str],
        [],
        "JSON pointers of body fields redacted in requests and responses (e.g. /user).",
    )
    loader.add_option(
        "replayproxy_no_redact", bool, False, "Record secrets as they are (not redacted)."
    )
    loader.add_option(
        "replayproxy_record_tls_failures",
        bool,
        False,
        "Record a request whose upstream certificate could not be verified as a "
        "no_response interaction (by default it is only reported).",
    )


def redactor_from(opts: Any, updated: set[str]) -> Redactor:
    """The redactor mitmproxy's current options ask for; :class:`OptionsError` names a bad one."""
    if updated & {"replayproxy_redact_headers", "replayproxy_redact_query"}:
        for name in [*opts.replayproxy_redact_headers, *opts.replayproxy_redact_query]:
            if not name.strip() or any(c in name for c in " \t\r\n:"):
                raise OptionsError(f"invalid name to redact: {name!r}")
    if opts.replayproxy_no_redact:
        return NO_REDACTION
    try:
        return Redactor.with_extra(
            opts.replayproxy_redact_headers,
            opts.replayproxy_redact_query,
            opts.replayproxy_redact_body_field,
        )
    except ValueError as e:
        raise OptionsError(f"invalid body field to redact: {e}") from None


def check_target(path: str, mode: str) -> None:
    """Refuse a cassette target the writer would refuse, before anything is created."""
    if mode not in RECORD_MODES:
        raise OptionsError(f"replayproxy_record_mode must be one of {', '.join(RECORD_MODES)}")
    target = Path(path)
    if target.is_dir():
        raise OptionsError(f"{path}: is a directory, not a cassette file")
    if not (target.parent if str(target.parent) else Path(".")).is_dir():
        raise OptionsError(f"{path}: directory {target.parent} does not exist")
    if mode == "new" and target.exists():
        raise OptionsError(str(CassetteExistsError(_EXISTS, path=path)))
    if mode == "append" and target.exists():
        try:
            load(target, on_warning=lambda message: None)  # the writer reports a torn tail
        except CassetteError as e:
            raise OptionsError(str(e)) from None


_EXISTS = "already exists; pass --append to add to it or --overwrite to replace it"
