"""The snippet of docs/guides/your-endpoint.md ("In short"), as written there
(tests/examples/test_chat_endpoint.py checks the two stay the same)."""

import pytest

from replayproxy.testing import capture_url


@pytest.mark.replayproxy(
    upstream="https://api.openai.com", cassette="cassettes/chat-stop.cassette", speed=1
)
@pytest.mark.replayproxy(faults=["split:at=midline"])  # every provider event cut in two reads
def test_turn(endpoint, stream_snapshot):  # endpoint: your app, its provider at replayproxy.url
    capture = capture_url("POST", endpoint.url + "/chat", json=endpoint.chat_body("t-1"))
    capture.assert_streaming_headers()  # text/event-stream, no-cache, no content-encoding
    capture.assert_streamed(min_frames=2)  # "1 frame, 25915 bytes in all ... at 702.2 ms"
    capture.assert_terminated(["committed", "rejected"])  # once, last, then the socket closed
    capture.assert_stream_ok(contract="tests/chat-turn.contract.toml")  # your events' contract
    stream_snapshot(capture)  # the turn by meaning (ids, times left out) in __snapshots__/
