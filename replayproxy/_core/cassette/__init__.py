"""The cassette: its data model (WebSocket sessions included), binary codec and records,
validation, the text form."""
