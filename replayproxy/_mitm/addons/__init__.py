"""mitmproxy addons: the recorder, the replayer and their standalone mitmdump scripts."""
