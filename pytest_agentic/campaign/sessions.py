"""The sessions that wrote a campaign, and what each one measured with.

A campaign may be written by several sessions: the one that began it and each ``--agentic-resume``
that finished it. Each may run under another pytest-agentic or litellm release, or send its
``openai/`` calls by another route (``run.calls.route``). ``campaign.json`` keeps one entry per
session in ``sessions``, oldest first, and its top-level ``harness_version``, ``litellm_version`` and
``call_route`` stay those of the session that began the campaign: a resume adds to the record and
rewrites nothing of it. Where the sessions differ, a note says so (``differences``), in summary.md
and everywhere the campaign's notes are shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .format import Manifest, SessionInfo
from .untrusted import code_span

#: What may differ from one session to the next and matters to a reader of the measurements,
#: with its name in a note.
MEASURED_WITH = {
    "harness_version": "pytest-agentic",
    "litellm_version": "litellm",
    "call_route": "call route",
}


def earlier(manifest: Manifest) -> list[SessionInfo]:
    """The sessions a campaign folder records; a folder written before ``sessions`` was kept gets one
    entry made of its top-level keys (its runs added unknown: None)."""
    if manifest["sessions"]:
        return [SessionInfo(**s) for s in manifest["sessions"]]
    return [SessionInfo(started_at=manifest.get("started_at", ""), resumed=False,
                        harness_version=manifest.get("harness_version", ""),
                        litellm_version=manifest.get("litellm_version"), call_route=manifest["call_route"],
                        xdist_workers=manifest.get("xdist_workers"), runs_added=None)]


def measured_with(sessions: Sequence[SessionInfo]) -> dict[str, Any]:
    """The top-level keys of ``campaign.json``: those of the session that began the campaign."""
    first = sessions[0]
    return {key: first.get(key) for key in MEASURED_WITH}


def differences(sessions: Sequence[SessionInfo]) -> list[str]:
    """One sentence per key of ``MEASURED_WITH`` on which the sessions differ; none when they agree or when
    only one session recorded a value."""
    notes = []
    for key, name in MEASURED_WITH.items():
        values = [s.get(key) for s in sessions]
        if len({v for v in values if v}) < 2:  # one known value (a value not recorded says nothing)
            continue
        parts = []
        for number, (session, value) in enumerate(zip(sessions, values), 1):
            added = session.get("runs_added")
            runs = "runs unknown" if added is None else f"{added} run{'s' if added != 1 else ''}"
            how = "resumed" if session.get("resumed") else "began"
            # Read back from campaign.json, a file anyone may have edited: shown as literal code spans.
            parts.append(f"session {number} ({how} {code_span(session.get('started_at'), 40)}, {runs}): "
                         f"{code_span(value, 60) if value else 'not recorded'}")
        notes.append(f"the sessions that wrote this campaign ran under different {name} values: "
                     + "; ".join(parts) + ".")
    return notes


def versus(then: Sequence[SessionInfo], now: Sequence[SessionInfo]) -> list[str]:
    """One line per key of ``MEASURED_WITH`` whose values differ between two campaigns' sessions, for a
    comparison: what each side ran under (all its sessions' values, in order, once each). A key either side
    did not record is left out."""
    lines = []
    for key, name in MEASURED_WITH.items():
        # A value a campaign did not record (None, or empty) says nothing: only known values are compared.
        a = list(dict.fromkeys(v for v in (s.get(key) for s in then) if v))
        b = list(dict.fromkeys(v for v in (s.get(key) for s in now) if v))
        if a and b and a != b:
            lines.append(f"{name} {', '.join(code_span(v, 60) for v in a)} then, "
                         f"{', '.join(code_span(v, 60) for v in b)} now")
    return lines


__all__ = ["MEASURED_WITH", "differences", "earlier", "measured_with", "versus"]
