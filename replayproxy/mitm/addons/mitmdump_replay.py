"""Standalone replay script for ``mitmdump -s`` / ``mitmweb -s`` (replayproxy must be importable).

    mitmdump -s "$(replayproxy addon-path replay)" \\
        --set replayproxy_replay=cassettes/openai-chat-text.cassette --set replayproxy_speed=2

Options: ``replayproxy_replay`` (cassette path), ``replayproxy_speed``, ``replayproxy_faults``,
``replayproxy_ignore_query``, ``replayproxy_ignore_body_field``, ``replayproxy_allow_repeats``,
``replayproxy_match_host``. The addon switches ``connection_strategy`` to ``lazy`` so nothing is
ever resolved or contacted upstream.
"""

from __future__ import annotations

from replayproxy.mitm.addons.replayer import Replayer

addons = [Replayer()]
