"""``python -m replayproxy``: the same as the ``replayproxy`` command."""

from replayproxy.cli import main

main()
