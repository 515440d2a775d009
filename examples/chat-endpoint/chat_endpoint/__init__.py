"""A small streaming chat endpoint, the worked example of docs/guides/your-endpoint.md.

``POST /chat`` proxies an OpenAI-style chat stream into the endpoint's own typed events
(``started``, ``delta``, then ``committed`` or ``rejected``, each with the turn id) and stores
the turn in SQLite. See ``app.py`` for the routes and ``CHAT_EXAMPLE_BUG`` for the three bugs
the example's tests must catch.
"""

from chat_endpoint.app import Settings, create_app

__all__ = ["Settings", "create_app"]
