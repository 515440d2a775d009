"""The sans-IO core: pure data and protocol logic.

Nothing in this package imports asyncio, socket, time, mitmproxy, click or pytest, and nothing
reads a clock: timestamps come in as integers (nanoseconds), bytes come in as ``bytes``.
"""
