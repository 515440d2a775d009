"""The replay engine: the session that answers requests from a cassette, the origin that
executes schedules on sockets, and the standalone server. Never imports mitmproxy."""
