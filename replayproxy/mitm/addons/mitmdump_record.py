"""Standalone recording script for ``mitmdump -s`` / ``mitmweb -s`` (needs replayproxy importable).

    mitmdump -s "$(replayproxy addon-path record)" \\
        --set replayproxy_record=session.cassette [--set replayproxy_record_mode=append] \\
        [--set replayproxy_redact_headers=x-my-token] [--mode reverse:https://api.openai.com]

Options: ``replayproxy_record`` (cassette path; empty = off), ``replayproxy_record_mode``
(``new`` | ``append`` | ``overwrite``), ``replayproxy_redact_headers`` and
``replayproxy_redact_query`` (more names to redact, repeatable), ``replayproxy_no_redact``.
Every flow is streamed through to the client and recorded; see
:mod:`replayproxy.mitm.addons.recorder`. In reverse mode, ``--set connection_strategy=lazy``
makes an unreachable upstream a recorded ``no_response`` with a 502 for the client.
"""

from __future__ import annotations

from replayproxy.mitm.addons.recorder import Recorder

addons = [Recorder()]
