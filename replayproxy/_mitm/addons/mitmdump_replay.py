"""Standalone replay script for ``mitmdump -s`` / ``mitmweb -s`` (replayproxy must be importable).

    mitmdump -s "$(replayproxy addon-path replay)" \\
        --set replayproxy_replay=cassettes/openai-chat-text.cassette --set replayproxy_speed=2

Options: ``replayproxy_replay`` (cassette path), ``replayproxy_speed``, ``replayproxy_faults``,
``replayproxy_ignore_query``, ``replayproxy_ignore_body_field``, ``replayproxy_allow_repeats``,
``replayproxy_match_host``, ``replayproxy_http_version`` (recorded/client/1.1/2),
``replayproxy_replay_record_mode`` (none/once/new_episodes/all, see docs/guides/pytest.md). The
addon switches ``connection_strategy`` to ``lazy`` so nothing is resolved or contacted upstream
except the requests a record mode forwards, which the recorder (the replayer as its sink)
appends to the cassette; the ALPN choice answers TLS clients over the recorded HTTP version.
"""

from __future__ import annotations

from replayproxy._mitm.addons._alpn import AlpnChoice
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy._mitm.addons.replayer import Replayer

_replayer = Replayer()
addons = [_replayer, AlpnChoice(_replayer), Recorder(sink=_replayer)]
