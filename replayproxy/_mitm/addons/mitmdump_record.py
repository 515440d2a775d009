"""Standalone recording script for ``mitmdump -s`` / ``mitmweb -s`` (needs replayproxy importable).

    mitmdump -s "$(replayproxy addon-path record)" \\
        --set replayproxy_record=session.cassette [--set replayproxy_write_mode=append] \\
        [--set replayproxy_redact_headers=x-my-token] [--mode reverse:https://api.openai.com]

Options: ``replayproxy_record`` (cassette path; empty = off), ``replayproxy_write_mode`` (the
write mode, not a record mode: ``new`` | ``append`` | ``overwrite``), and the record group of
the option table (docs/guides/recording.md): ``replayproxy_redact_headers``,
``replayproxy_redact_query``, ``replayproxy_redact_body_field`` (more to redact, repeatable),
``replayproxy_no_redact``, ``replayproxy_record_tls_failures``.
Every flow is streamed through to the client and recorded; see
:mod:`replayproxy._mitm.addons.recorder`. In reverse mode, ``--set connection_strategy=lazy``
makes an unreachable upstream a recorded ``no_response`` with a 502 for the client.
"""

from __future__ import annotations

from replayproxy._mitm.addons.recorder import Recorder

addons = [Recorder()]
