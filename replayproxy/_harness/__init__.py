"""Run replayproxy from Python: :func:`use_cassette` and the servers it reuses.

- :mod:`.context`: :func:`use_cassette`, the context manager the pytest plugin is built on;
- :mod:`.hosts`: the per-process servers (the in-process engine, the embedded mitmproxy);
- :mod:`.env`: the proxy / CA environment variables for clients;
- :mod:`.netblock`: refuse non-loopback name lookups, connections and datagrams in this
  process (:mod:`.netpatch`: the guards it installs; :mod:`.threadorigin`: which test started
  each thread).
"""

from replayproxy._harness.context import CassetteUse, use_cassette

__all__ = ["CassetteUse", "use_cassette"]
