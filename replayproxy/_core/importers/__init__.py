"""Importers: other tools' recordings (VCR.py / pytest-recording, HAR) as cassettes (pure).

Each importer is a ``bytes -> Cassette`` function; :mod:`.build` turns one recovered exchange
into an :class:`~replayproxy._core.cassette.model.Interaction` (one frame per SSE or NDJSON
event, offsets from a recorded timing or the ``--timing`` model of :mod:`.timing`) and records
what the source could not tell in the cassette's ``meta`` (:mod:`.losses`). mitmproxy ``.flows``
files are read in ``replayproxy/_mitm/flows_import.py`` (the only layer that imports mitmproxy).
"""
