"""HTTP/2 in base-URL mode: the replay origin serves h2c (HTTP/2 over plain TCP with prior
knowledge) beside HTTP/1.1, on the sans-IO ``h2`` library.

:mod:`~.dispatch` decides from a connection's first bytes what it speaks (HTTP/1.1, h2c, or a
TLS ClientHello the plain listener refuses); :mod:`~.connection` serves an h2c connection, each
stream by the same session and schedules as HTTP/1.1; :mod:`~.frames` is what goes in the
frames (request and response fields, DATA frames within the peer's flow-control window).
"""
