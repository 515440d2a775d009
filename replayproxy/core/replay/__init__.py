"""Replay decisions: schedules, their wire form, resumed streams, record modes and the option
table."""
