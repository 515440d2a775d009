"""The mitmproxy shell: the embedded proxy harness and the addons. The only package that
imports mitmproxy."""
