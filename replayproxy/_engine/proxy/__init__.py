"""Forward-proxy replay served by the engine itself: CONNECT tunnels and TLS answered on the
origin's own connections, so no mitmproxy sits in the data path of a replay
(docs/explanations/architecture.md, "The shells")."""
