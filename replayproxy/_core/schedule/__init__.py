"""The replay schedule: what the origin does and when, for one interaction (``model``), and its
bytes for an origin in another process (``codec``).

Its own package, below ``faults/`` (a fault is a pure function ``Schedule -> Schedule``) and
``replay/`` (which plans and resumes with it): the order of core's subpackages is in
docs/explanations/architecture.md, "Core order".
"""
