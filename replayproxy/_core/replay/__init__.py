"""Replay decisions: resumed streams, record modes and write modes, how the recorder's
observations become an interaction (``assembly``), and the one option table (``options``; its
rows' type in ``option_def``, their value parsers in ``option_values``). The schedule itself is
``replayproxy._core.schedule``."""
