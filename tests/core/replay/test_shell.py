"""Which shell serves (core/replay/shell.py): a table of settings -> shell."""

from __future__ import annotations

import pytest

from replayproxy.core.replay.shell import Shell, choose_shell


@pytest.mark.parametrize(
    ("upstream", "records", "shell"),
    [
        (None, False, Shell.MITMPROXY),  # forward proxy: CONNECT and TLS interception
        (None, True, Shell.MITMPROXY),
        ("https://api.openai.com", False, Shell.ENGINE),  # plain base-URL replay
        ("https://api.openai.com", True, Shell.MITMPROXY),  # forwards and records
        ("http://127.0.0.1:9", False, Shell.ENGINE),
    ],
)
def test_only_base_url_replay_that_never_records_runs_in_the_engine(
    upstream: str | None, records: bool, shell: Shell
) -> None:
    """Forward mode and recording need mitmproxy; base-URL replay alone is the engine's."""
    assert choose_shell(upstream=upstream, records=records) is shell
