"""Which shell serves (core/replay/shell.py): a replay that never records is the engine's in
both modes; recording needs mitmproxy."""

from __future__ import annotations

import pytest

from replayproxy._core.replay.shell import Shell, choose_shell


@pytest.mark.parametrize(("records", "shell"), [(False, Shell.ENGINE), (True, Shell.MITMPROXY)])
def test_only_sessions_that_record_run_in_mitmproxy(records: bool, shell: Shell) -> None:
    """Forwarding and recording need mitmproxy; replay alone (base URL or forward) does not."""
    assert choose_shell(records=records) is shell
