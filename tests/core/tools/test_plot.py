"""The SVG timeline: well-formed for any cassette, with the marks and axis it promises."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

from hypothesis import given, settings

from replayproxy._core.cassette.model import Cassette
from replayproxy._core.tools.plot import plot
from replayproxy.testing.strategies import cassettes
from tests.cassette.samples import demo_cassette, sample_cassette

SVG = "{http://www.w3.org/2000/svg}"


@settings(max_examples=80)
@given(cassettes())
def test_any_cassette_plots_to_well_formed_svg(c: Cassette) -> None:
    """Any cassette (odd URLs, control bytes, huge or negative times) gives parseable SVG."""
    root = ET.fromstring(plot(c, title="t"))
    assert root.tag == f"{SVG}svg"
    labels = [t.text or "" for t in root.iter(f"{SVG}text") if (t.text or "").startswith("#")]
    assert len(labels) == len(c.interactions)


def test_frames_and_axis() -> None:
    """Each frame is a bar with its time and size; ticks are round milliseconds from 0."""
    svg = plot(sample_cassette())
    assert svg.count("<title>frame ") == 4 + 3
    assert "<title>frame 2: +110 ms, 22 B</title>" in svg
    ticks = re.findall(r">(\d+) ms</text>", svg)
    assert ticks[0] == "0" and len(ticks) >= 5
    steps = {int(b) - int(a) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1 and steps.pop() in (10, 20, 50, 100)


def test_only_the_chosen_interactions_get_lanes() -> None:
    """plot(c, [1]) draws one lane, labelled with its own index."""
    root = ET.fromstring(plot(demo_cassette(), [1]))
    labels = [t.text for t in root.iter(f"{SVG}text") if (t.text or "").startswith("#")]
    assert labels == ["#1 POST /v1/messages"]


def test_bar_height_grows_with_frame_size() -> None:
    """A bigger frame gets a taller bar (square-root scale)."""
    svg = plot(demo_cassette(), [2])
    heights = [float(h) for h in re.findall(r"height='([\d.]+)' fill='#2f6fdf'", svg)]
    sizes = [len(f.data) for f in demo_cassette().interactions[2].frames]
    assert sorted(range(3), key=lambda i: heights[i]) == sorted(range(3), key=lambda i: sizes[i])
