"""WebSocket sessions: their model and codec, text form, inspection, and replayed conversation."""
