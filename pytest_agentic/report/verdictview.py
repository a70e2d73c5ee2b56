"""The session's verdicts on the page: comparison, predictions, gates and rescore changes.

From a live session the controller hands its ``Verdicts``; for a stored campaign they are read
back from the folder: ``campaign.json`` (``compared_with``, ``gates``, ``rescore_of``), the
copied ``predictions.yaml`` (scored again on the stored runs) and the earlier campaign named in
``compared_with`` when its folder is still there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..campaign import stored
from ..run.records import RunRecord
from ..verdicts import compare, predictions, rescore


@dataclass
class VerdictView:
    comparison_of: str | None = None
    comparison_sentences: list[str] = field(default_factory=list)
    comparison_rows: list[dict[str, Any]] = field(default_factory=list)
    comparison_note: str | None = None
    unmatched: list[str] = field(default_factory=list)
    prediction_rows: list[dict[str, Any]] = field(default_factory=list)
    prediction_tally: str | None = None
    prediction_source: str | None = None
    gates: list[dict[str, Any]] = field(default_factory=list)
    gates_passed: bool | None = None
    exit_status: int | None = None
    rescore_of: str | None = None
    rescore_rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.comparison_of or self.prediction_rows or self.gates or self.rescore_of)


def _comparison(view: VerdictView, comparison: compare.Comparison) -> None:
    view.comparison_of = comparison.then_id
    view.comparison_sentences = [m.sentence() for m in comparison.models]
    view.comparison_rows = compare.task_rows(comparison)
    view.unmatched = list(comparison.unmatched)


def _rescore(view: VerdictView, manifest: Mapping[str, Any], records: Sequence[RunRecord]) -> None:
    if manifest.get("rescore_of") or any(r.get("rescore_of") for r in records):
        view.rescore_of = str(manifest.get("rescore_of") or next(r["rescore_of"] for r in records
                                                                  if r.get("rescore_of")))
        view.rescore_rows = rescore.changed_rows([dict(r) for r in records])


def _gates(view: VerdictView, manifest: Mapping[str, Any]) -> None:
    gates = manifest.get("gates")
    if isinstance(gates, dict):
        view.gates = [g for g in gates.get("results") or [] if isinstance(g, dict)]
        view.gates_passed = gates.get("passed")
        view.exit_status = gates.get("exit_status")


def from_session(verdicts: Any, records: Sequence[RunRecord], manifest: Mapping[str, Any]) -> VerdictView:
    """The view of a live session's ``verdicts.wiring.Verdicts`` (after ``evaluate``)."""
    view = VerdictView()
    if verdicts.comparison is not None:
        _comparison(view, verdicts.comparison)
    if verdicts.scored:
        view.prediction_rows = predictions.rows(verdicts.scored)
        view.prediction_tally = predictions.tally(verdicts.scored)
        view.prediction_source = str(verdicts.predictions_path)
    _gates(view, manifest)
    _rescore(view, manifest, records)
    return view


def from_stored(folder: Path, manifest: Mapping[str, Any], records: Sequence[RunRecord]) -> VerdictView:
    """The view of a stored campaign's verdicts, read back from its folder."""
    view = VerdictView()
    compared = manifest.get("compared_with")
    if isinstance(compared, dict):
        view.comparison_of = str(compared.get("campaign_id") or compared.get("path") or "an earlier campaign")
        try:
            baseline = stored.load(compared.get("path") or "")
        except (stored.CampaignFolderError, OSError):
            baseline = None
        if baseline is not None and baseline.id == view.comparison_of:
            _comparison(view, compare.compare(baseline.records, records, then_id=baseline.id,
                                              now_id=str(manifest.get("campaign_id") or folder.name)))
        else:
            view.comparison_note = (f"the earlier campaign's folder ({compared.get('path')}) is not readable "
                                    "from here: the verdicts below are those recorded in campaign.json")
            for m in compared.get("models") or []:
                p = m.get("p_value")
                view.comparison_sentences.append(
                    f"{m.get('model')}: {m.get('then')} then, {m.get('now')} now: {m.get('verdict')}"
                    + (f" (Fisher's exact test, two-sided, p = {p:.3g})" if isinstance(p, float) else ""))
    kept = folder / "predictions.yaml"
    if kept.is_file():
        models = sorted({r["model"] for r in records})
        try:
            scored = predictions.score(predictions.load(kept, models), records)
        except predictions.PredictionsError as exc:
            view.prediction_tally = f"cannot score {kept}: {exc}"
        else:
            view.prediction_rows = predictions.rows(scored)
            view.prediction_tally = predictions.tally(scored)
        view.prediction_source = str((manifest.get("predictions") or {}).get("file") or kept.name)
    _gates(view, manifest)
    _rescore(view, manifest, records)
    return view
