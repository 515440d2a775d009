"""``python -m replayproxy``: the same as the ``replayproxy`` command."""

from replayproxy._cli import main

main()
