"""The SDK oracle: serve each corpus stream (and broken variants of them) on loopback, read it
with the official clients the ways applications do, and hold the checker's errors against what
the clients did (issue 25, item 1).

- :mod:`.outcome`: what a client did with a stream (:class:`~.outcome.ClientOutcome`) and how
  that is decided against the stream's own reading;
- :mod:`.truth`: the independent reading of a stream's payloads (text, tool arguments, usage,
  finish reason, whether it reached its end);
- :mod:`.streams`: the streams the oracle reads (the corpus, with URL and content type) and
  :mod:`.variants` the broken ones derived from them;
- :mod:`.server`: the loopback server that answers each request with its stream's exact bytes;
- :mod:`.py_openai`, :mod:`.py_anthropic`, :mod:`.py_google`, :mod:`.py_bedrock`: the Python
  readers; :mod:`.node_runner` and ``node/read.mjs``: the Node SDKs and the Vercel AI SDK;
- :mod:`.readers`: the shape the reader modules hand the runner;
- :mod:`.run`: every reader over every stream (one server, one client per SDK, one Node
  process), and each stream's checker verdict beside it; :mod:`.cache`: that measurement once
  per test session, shared by xdist workers;
- :mod:`.agreement`: checker errors against client failures; :mod:`.report`: the per-rule table
  in ``tests/check/oracle/measured.md`` (``python -m tests.check.oracle.report [--write]``).
"""
