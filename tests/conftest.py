"""Root fixtures shared by every test: a trustme CA and the local provider simulator.

* ``ca`` (session) — a ``trustme.CA``; trust it in clients with ``ca.configure_trust(ctx)``,
  or point them at ``ca_pem``.
* ``ca_pem`` (session) — path of the CA certificate PEM file (``curl --cacert``,
  ``httpx.Client(verify=str(ca_pem))``, ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``...).
* ``ssl_client_context`` (session) — an ``ssl.SSLContext`` for clients trusting ``ca``.
* ``simulator`` (function) — a plain-HTTP :class:`~replayproxy.testing.Simulator`, started,
  with no delays; ``simulator.url`` is ``http://127.0.0.1:PORT``.
* ``tls_simulator`` (function) — the same over HTTPS, cert for 127.0.0.1/localhost/::1 from ``ca``.
* ``make_simulator`` (function) — factory ``make_simulator(tls=False, behavior=None)`` for
  more simulators or custom default behaviors; all are stopped at teardown.

``pytester`` is enabled for the pytest plugin's tests.

The simulators are function-scoped because starting one costs a thread and a bind (~ms) and a
fresh one keeps ``served`` records per test. For a module-scoped one, write a fixture doing
``with Simulator(tls=...) as sim: yield sim`` (and ``sim.clear()`` between tests if needed).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from replayproxy.testing import Behavior, Simulator

# The pytest plugin's tests run pytest on small example projects (tests/pytest_plugin/).
pytest_plugins = ["pytester"]

# Hypothesis times each example (200 ms deadline) and the generation of inputs ("too slow"):
# both are speed checks, and speed is measured in benchmarks/, not asserted on these shared,
# noisy machines, where a loaded host failed them with nothing wrong. What the properties
# assert is unchanged; a test's own @settings still sets its number of examples.
settings.register_profile(
    "shared-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("shared-machine")


@pytest.fixture(scope="session")
def ca() -> Any:
    """A throwaway certificate authority (trustme.CA) for HTTPS tests."""
    import trustme

    return trustme.CA()


@pytest.fixture(scope="session")
def ca_pem(ca: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path to the CA certificate as a PEM file."""
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return path


@pytest.fixture(scope="session")
def ssl_client_context(ca: Any) -> ssl.SSLContext:
    """A client SSLContext that trusts ``ca``."""
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    return ctx


@pytest.fixture
def make_simulator(ca: Any) -> Iterator[Callable[..., Simulator]]:
    """Factory for started simulators, all stopped at teardown."""
    started: list[Simulator] = []

    def make(tls: bool = False, behavior: Behavior | None = None) -> Simulator:
        sim = Simulator(tls=ca if tls else None, behavior=behavior).start()
        started.append(sim)
        return sim

    yield make
    for sim in started:
        sim.stop()


@pytest.fixture
def simulator() -> Iterator[Simulator]:
    """A started plain-HTTP provider simulator on 127.0.0.1 (no delays by default)."""
    with Simulator() as sim:
        yield sim


@pytest.fixture
def tls_simulator(ca: Any) -> Iterator[Simulator]:
    """A started HTTPS provider simulator whose certificate is issued by ``ca``."""
    with Simulator(tls=ca) as sim:
        yield sim
