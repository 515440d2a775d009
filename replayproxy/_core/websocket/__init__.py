"""WebSocket sessions replayed: the conversation as a state machine and what ``cassette show``
says of them. Their model, record codec and text form are part of the cassette
(``replayproxy._core.cassette.websocket``, ``websocket_text``)."""
