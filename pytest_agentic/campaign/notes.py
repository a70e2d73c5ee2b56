"""The sentences a reader of a campaign must know beyond its tables (summary.md, the terminal)."""

from __future__ import annotations

from collections.abc import Mapping

from ..run import answerlines
from ..run.calls import refusals, textcalls
from ..run.records import RunRecord
from ..run.sandbox import UNCONFINED_NOTE
from .untrusted import code_span


#: Infra causes that mean the endpoint refused the key, not that it is down.
_REFUSED = ("AuthenticationError", "PermissionDeniedError")
#: Infra causes that mean the endpoint answered 404: it has no such model (or no such path).
_NOT_FOUND = ("NotFoundError",)


def campaign_notes(records: list[RunRecord], caveats: Mapping[str, str], budget_skipped: int,
                   budget: float | None, unconfined: bool = False) -> list[str]:
    """Unconfined model code (chosen so, or a run recorded so), model caveats, runs the budget skipped,
    endpoints that look down or lost runs, tool calls written as text, failed runs judged from a
    server's refusal, replies without their answer lines."""
    notes = []
    if unconfined or any(r["sandbox"] is not None and r["sandbox"]["kind"] == "none" for r in records):
        notes.append(UNCONFINED_NOTE)
    for name in sorted({r["model"] for r in records}):
        if caveats.get(name):
            notes.append(f"model {name!r}: {caveats[name]}")
    if budget_skipped:
        notes.append(f"{budget_skipped} runs skipped: the campaign budget of ${budget:g} was spent")
    by_model: dict[str, list[RunRecord]] = {}
    for r in records:
        by_model.setdefault(r["model"], []).append(r)
    for model, runs in sorted(by_model.items()):
        infra = [r for r in runs if r["failure_mode"] == "infra_error"]
        if infra and len(infra) == len(runs):
            cause = infra[-1]["infra_cause"] or ""
            state = ("refuses the credentials" if cause.startswith(_REFUSED)
                     else "does not serve the model it was asked for (model not found)"
                     if cause.startswith(_NOT_FOUND) else "looks down")
            notes.append(f"the endpoint of model {model!r} {state}: all {len(runs)} runs failed with "
                         f"infra_error (last cause: {code_span(cause)})")
        elif infra:
            notes.append(f"model {model!r}: {len(infra)} of {len(runs)} runs lost to infra_error "
                         "(not counted against the model; see summary.md)")
        notes.extend(n for n in (textcalls.note(model, runs), refusals.note(model, runs),
                                 answerlines.note(model, runs)) if n)
    return notes
