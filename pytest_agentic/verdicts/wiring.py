"""What the controller says about a finished campaign beyond its tables.

Comparison with an earlier campaign, scored predictions, the rescore's
changes and the CI gates: set up (and validated) at session start, evaluated
at session finish, written to summary.md, campaign.json and the terminal.
Each concept lives in its own module; this one only wires them.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from . import compare, gates, predictions, rescore, sweep
from ..run.task import BENCHMARK_REVISION
from .revisions import of as revision_of
from ..campaign import sessions, stored
from ..campaign.format import SessionInfo
from ..run.records import FailureMode, RunRecord


class Verdicts:
    """One session's comparison, predictions, rescore section and gates.

    Built by the controller from the command line (``Controller.verdicts_of``): this package
    never reads pytest options or the session itself, so it imports nothing above it.
    """

    def __init__(self, gate_config: gates.GateConfig, *, compare_path: str | None = None,
                 predictions_path: str | None = None,
                 replay: rescore.Replay | None = None) -> None:
        self.gate_config = gate_config
        self.compare_path = compare_path
        self.predictions_path = predictions_path
        self.replay = replay
        self.baseline: stored.StoredCampaign | None = None
        self.predictions: list[predictions.Prediction] = []
        self.comparison: compare.Comparison | None = None
        self.scored: list[predictions.Scored] = []
        self.gate_results: list[gates.GateResult] = []
        self.exitstatus: int | None = None
        self.final_exitstatus: int | None = None

    # -- session start: fail early on bad input --------------------------------
    def check(self, models: Sequence[str]) -> None:
        """Fail early on bad input; ``models`` are the selected model entries' names."""
        if self.gate_config.gate_only and not self.gate_config.any:
            raise pytest.UsageError("--agentic-gate-only needs a gate (--agentic-min-pass-rate, "
                                    "--agentic-min-lower-bound, --agentic-fail-on-regression or "
                                    "--agentic-max-infra-errors): without one, no run could fail the session")
        if self.gate_config.fail_on_regression and not self.compare_path:
            raise pytest.UsageError("--agentic-fail-on-regression needs --agentic-compare PATH (the earlier campaign)")
        if self.compare_path:
            try:
                self.baseline = stored.load(self.compare_path)
            except stored.CampaignFolderError as exc:
                raise pytest.UsageError(f"--agentic-compare: {exc}") from None
        if self.predictions_path:
            try:
                self.predictions = predictions.load(self.predictions_path, list(models))
            except predictions.PredictionsError as exc:
                raise pytest.UsageError(f"--agentic-predictions: {exc}") from None

    # -- session finish ------------------------------------------------------------
    def evaluate(self, records: Sequence[RunRecord], exitstatus: int, other_failures: int,
                 campaign_id: str = "this campaign", written_by: Sequence[SessionInfo] = ()) -> int:
        """Compute everything; returns the session's exit status under the gates.

        ``written_by``: the sessions that wrote this campaign (``campaign.sessions``), for the comparison."""
        if self.baseline is not None:
            measured_with = sessions.versus(sessions.earlier(self.baseline.manifest), written_by) if written_by else []
            self.comparison = compare.compare(self.baseline.records, records, then_id=self.baseline.id,
                                              now_id=campaign_id,
                                              revisions=(revision_of(self.baseline.manifest), BENCHMARK_REVISION),
                                              measured_with=measured_with)
        if self.predictions:
            self.scored = predictions.score(self.predictions, records)
        self.gate_results = gates.evaluate(self.gate_config, records, self.comparison)
        infra = sum(1 for r in records if r["failure_mode"] == FailureMode.INFRA_ERROR.value)
        self.exitstatus = int(exitstatus)
        self.final_exitstatus = gates.exit_status(self.gate_config, self.gate_results, int(exitstatus),
                                                  other_failures, infra)
        return self.final_exitstatus

    def notes(self, records: Sequence[RunRecord]) -> list[str]:
        """What the campaign's notes must say first: a rescore of runs that answered other prompts."""
        note = rescore.prompt_note(self.replay, list(records)) if self.replay is not None else None
        return [note] if note else []

    def sections(self, records: Sequence[RunRecord]) -> list[tuple[str, str]]:
        """(title, markdown body) of each section this session adds to summary.md."""
        out = []
        if self.replay is not None:
            out.append(("Rescore", rescore.markdown(self.replay, list(records))))
        if self.comparison is not None:
            out.append(("Comparison with an earlier campaign", compare.markdown(self.comparison)))
        variants = sweep.markdown(records)
        if variants:
            out.append(("Variants compared (paired, same instances and seeds)", variants))
        if self.scored:
            out.append(("Predictions", predictions.markdown(self.scored, str(self.predictions_path))))
        if self.gate_results:
            out.append(("CI gates", "\n".join(self.gate_lines()) + "\n"))
        return out

    def gate_lines(self) -> list[str]:
        assert self.final_exitstatus is not None and self.exitstatus is not None
        return gates.lines(self.gate_config, self.gate_results, self.final_exitstatus, self.exitstatus)

    def manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.baseline is not None:
            out["compared_with"] = {"campaign_id": self.baseline.id, "path": str(self.baseline.path),
                                    "benchmark_revision": revision_of(self.baseline.manifest)}
            if self.comparison is not None:
                # p_value: Fisher's exact test on the pooled counts; paired: the per-task comparison
                # (mean change, its 95% interval, the sign-flip p-value); the verdict rests on verdict_basis.
                out["compared_with"]["models"] = [
                    {"model": m.label, "then": str(m.then), "now": str(m.now), "p_value": m.p_value,
                     "verdict": m.verdict, "verdict_basis": m.basis, "verdict_p_value": m.verdict_p,
                     "paired_p_value": m.paired_p, "paired": m.paired.as_dict() if m.paired else None,
                     "power": m.power.as_dict() if m.power else None, "changed_tasks": m.changed_tasks}
                    for m in self.comparison.models]
        if self.predictions_path:
            data = Path(self.predictions_path).read_bytes()
            out["predictions"] = {"file": str(self.predictions_path), "sha256": hashlib.sha256(data).hexdigest(),
                                  "tally": predictions.tally(self.scored) if self.scored else None}
        if self.gate_results:
            out["gates"] = {"passed": all(r.passed for r in self.gate_results),
                            "exit_status": self.final_exitstatus,
                            "results": [{"gate": r.gate, "passed": r.passed, "detail": r.detail}
                                        for r in self.gate_results]}
        return out

    def keep_inputs(self, folder: Path | None) -> None:
        """Copy the predictions file into the campaign folder, for the record."""
        if folder is not None and self.predictions_path:
            shutil.copyfile(self.predictions_path, folder / "predictions.yaml")
