"""VCR.py cassettes as bytes -> Cassette: any bodies VCR.py's own YAML and JSON serializers
write (text, ``!!binary``) come back byte-exact; an SSE body becomes one frame per event whose
frames join to the body; malformed documents are one line naming the file and interaction."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replayproxy._core.importers.build import ImportFailed
from replayproxy._core.importers.vcr import import_vcr

vcr_serialize = pytest.importorskip("vcr.serialize")
serializers = pytest.importorskip("vcr.serializers")
VcrRequest = pytest.importorskip("vcr.request").Request

URI = "http://127.0.0.1:9/v1/x"


def written(bodies: list[tuple[bytes, bytes, str]], serializer: object) -> bytes:
    """The file VCR.py writes for these (request body, response body, content type)."""
    requests = [VcrRequest("POST", URI, rb, {"x-n": str(i)}) for i, (rb, _, _) in enumerate(bodies)]
    responses = [
        {"body": {"string": b}, "headers": {"content-type": [ct]},
         "status": {"code": 200, "message": "OK"}}
        for _, b, ct in bodies
    ]  # fmt: skip
    text = vcr_serialize.serialize({"requests": requests, "responses": responses}, serializer)
    return text.encode()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.binary(max_size=200),
            st.binary(max_size=300),
            st.sampled_from(["application/octet-stream", "application/gzip", "image/png"]),
        ),
        max_size=4,
    )
)
def test_yaml_bodies_round_trip(bodies: list[tuple[bytes, bytes, str]]) -> None:
    """Arbitrary bytes (VCR.py writes non-UTF-8 as ``!!binary``) import byte-exact."""
    cassette = import_vcr(written(bodies, serializers.yamlserializer), "t.yaml")
    got = [(x.request.body, x.response.body) for x in cassette.interactions if x.response]
    assert got == [(rb, b) for rb, b, _ in bodies]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30).map(lambda s: s.replace("\r", "")), min_size=1))
def test_sse_text_in_json_is_one_frame_per_event(datas: list[str]) -> None:
    """A JSON cassette's SSE body: one frame per event, joining to the recorded bytes."""
    body = "".join("data: " + d.replace("\n", "\ndata: ") + "\n\n" for d in datas).encode()
    data = written([(b"{}", body, "text/event-stream")], serializers.jsonserializer)
    (x,) = import_vcr(data, "t.json").interactions
    assert x.response is not None and x.response.body == body
    assert len(x.frames) == len(datas)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("interactions: [\n", "t.yaml: not a VCR.py cassette (unparseable"),
        ("version: 1\n", "t.yaml: not a VCR.py cassette (no interactions list)"),
        ("interactions: []\nversion: 2\n", "t.yaml: VCR.py cassette version 2 (expected 1)"),
        ("interactions: [{request: {method: GET, uri: 'http://h/'}}]\n",
         "t.yaml: interaction 0 (GET http://h/): response is missing or not a map"),
        ("interactions: [{request: {method: GET, uri: 'http://h/'}, response: "
         "{status: {code: x}}}]\n", "t.yaml: interaction 0 (GET http://h/): response status code"),
        ("a: !!python/object/apply:os.system [ls]\n", "t.yaml: not a VCR.py cassette"),
    ],
)  # fmt: skip
def test_malformed_documents_are_named(text: str, message: str) -> None:
    with pytest.raises(ImportFailed) as e:
        import_vcr(text.encode(), "t.yaml")
    assert str(e.value).startswith(message)
