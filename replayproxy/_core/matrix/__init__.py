"""The fault matrix: one test run under a catalogue of stream failures, and which it survives.

Pure core (no I/O): the cells (:mod:`.cells`: named sets of fault specs with their outcome
class, :func:`cells` to select them), their concrete faults on a cassette (:mod:`.resolve`:
symbolic positions and statuses resolved per interaction, or a skip with the reason), and the
report model (:mod:`.report`, rendered by :mod:`.render`) that the pytest plugin and
``replayproxy matrix`` both write. See docs/guides/matrix.md.
"""

from __future__ import annotations

from replayproxy._core.matrix.cells import OUTCOMES, SETS, SYMBOLS, Cell, cells, outcome_class
from replayproxy._core.matrix.report import CellResult, Comparison, MatrixReport, compare
from replayproxy._core.matrix.resolve import Resolved, overloaded_status, resolve

__all__ = [
    "OUTCOMES",
    "SETS",
    "SYMBOLS",
    "Cell",
    "CellResult",
    "Comparison",
    "MatrixReport",
    "Resolved",
    "cells",
    "compare",
    "outcome_class",
    "overloaded_status",
    "resolve",
]
