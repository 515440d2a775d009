"""The pytest plugin: a cassette per test, recorded once and replayed offline in CI.

Registered through the ``pytest11`` entry point (``replayproxy = replayproxy.pytest_plugin.
plugin``), so installing replayproxy is enough; ``-p no:replayproxy`` turns it off.

- :mod:`.plugin`: the hooks, the marker ``@pytest.mark.replayproxy(...)``, the fixtures
  (``replayproxy``, ``replayproxy_config``, ``replayproxy_cassette_dir``) and the command-line
  and ini options, generated from :data:`replayproxy._core.replay.options.REPLAY_OPTIONS`;
- :mod:`.naming`: the cassette path of a test;
- :mod:`.matrix`: the fault matrix's items (one per cell; ``matrix=``, ``--replayproxy-matrix``);
- :mod:`.report`: the fault matrix's results at the end of the session (summary, report,
  baseline).

Built on :func:`replayproxy.use_cassette`; docs/guides/pytest.md documents every option.
"""

from replayproxy.pytest_plugin._naming import cassette_name

__all__ = ["cassette_name"]
