"""Replay decisions: schedules, their wire form, resumed streams, record modes and write modes,
and the one option table (``options``; its rows' type in ``option_def``, their value parsers in
``option_values``)."""
