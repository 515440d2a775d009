"""Checker errors held against client failures, per stream: an error no client suffers is a
false alarm, a client failure no error names is a miss. Warnings are only context. A stream
whose every client stopped at its in-band provider error grades no checker error (see
:func:`_stopped_at_the_providers_error`)."""

from __future__ import annotations

from tests.check.oracle.run import Result

__all__ = ["disagreement", "unflagged_variant"]


def _rules(result: Result) -> str:
    return ", ".join(sorted({v.rule for v in result.errors}))


def _failures(result: Result) -> list[str]:
    return [str(o) for o in result.outcomes if o.failed]


def _context(result: Result) -> str:
    stream = result.stream
    where = f"{stream.name} ({stream.provider}, {stream.dialect}"
    return where + (f", broken: {stream.broken})" if stream.broken else ")")


def _stopped_at_the_providers_error(result: Result) -> bool:
    """Every client ended on the stream's own in-band error (as it should): none of them got
    to assemble the message, so the stream cannot tell whether a checker error about what
    came before the error is harmful; it neither confirms nor refutes it."""
    return bool(result.outcomes) and all(
        o.status == "fine" and "the stream's error" in o.detail for o in result.outcomes
    )


MEASURED_FROM = {"openai.responses.item-identity": ("openai-python", 3)}
"""Error rules measured on a client's newer major version only (the older one reads the
stream): with only the older one installed, such an error is neither confirmed nor refuted."""


def _older_clients_only(result: Result) -> bool:
    """Every checker error is a rule of :data:`MEASURED_FROM` and every installed version of
    its client is older than the version the rule was measured on."""
    rules = {v.rule for v in result.errors}
    if not rules or not rules <= set(MEASURED_FROM):
        return False
    for rule in rules:
        client, major = MEASURED_FROM[rule]
        versions = [o.client.split()[1] for o in result.outcomes if o.client.startswith(client)]
        if not versions or any(int(v.split(".")[0]) >= major for v in versions):
            return False
    return True


def disagreement(result: Result) -> str | None:
    """``None`` when the checker and the clients agree on the stream, else what differs."""
    failures = _failures(result)
    inconclusive = _stopped_at_the_providers_error(result) or _older_clients_only(result)
    if result.errors and not failures and not inconclusive:
        fine = "; ".join(f"{o.client} {o.way}" for o in result.outcomes)
        return (
            f"{_context(result)}: checker error(s) {_rules(result)} but every client read it "
            f"fine: {fine}"
        )
    if failures and not result.errors:
        why = f"cannot check it ({result.checker_note})" if result.checker_note else "no error"
        warnings = sorted({v.rule for v in result.warnings})
        seen = f" (warnings: {', '.join(warnings)})" if warnings else ""
        return (
            f"{_context(result)}: client failure(s) but the checker gives {why}{seen}: "
            + " | ".join(failures)
        )
    return None


def unflagged_variant(result: Result) -> str | None:
    """For a broken variant: ``None`` when both the checker and some client flag it."""
    missing = []
    if not result.errors:
        missing.append("the checker gives no error")
    if not _failures(result):
        missing.append("every client read it fine")
    if not missing:
        return None
    return f"{_context(result)}: {' and '.join(missing)}"
