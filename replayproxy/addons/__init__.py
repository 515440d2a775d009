"""mitmproxy addons: the only modules that import mitmproxy."""
