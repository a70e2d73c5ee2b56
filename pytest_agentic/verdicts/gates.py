"""CI gates: conditions on a campaign's numbers that decide the session's exit status.

Gates apply to every model of the campaign (its overall numbers). Infra errors
are never judged runs; ``max_infra_errors`` gates their number on its own.
``min_lower_bound`` reads the lower end of the overall 95% interval clustered by
task (``pytest_agentic.campaign.clustered``): the runs of one task are not
independent draws, and a bound that treated them so would pass models it should not.
A failed gate makes the session exit with :data:`GATE_FAILED_EXIT`; with
``gate_only``, failed runs alone do not make the session fail, the gates decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .compare import Comparison
from ..run.records import FailureMode, RunRecord
from ..campaign.clustered import Overall, overall as clustered_overall
from ..campaign.tables import task_counts
from ..campaign.stats import percent, stored

#: Exit status of a session whose campaign failed a gate (pytest's own codes are 0 to 5).
GATE_FAILED_EXIT = 6


@dataclass(frozen=True)
class GateConfig:
    min_pass_rate: float | None = None
    min_lower_bound: float | None = None
    fail_on_regression: bool = False
    max_infra_errors: int | None = None
    gate_only: bool = False

    @property
    def any(self) -> bool:
        return (self.min_pass_rate is not None or self.min_lower_bound is not None or self.fail_on_regression
                or self.max_infra_errors is not None)


@dataclass(frozen=True)
class GateResult:
    gate: str
    passed: bool
    detail: str


def _overall(records: Sequence[RunRecord]) -> dict[str, Overall]:
    return {model: clustered_overall(task_counts([r for r in records if r["model"] == model]))
            for model in sorted({r["model"] for r in records})}


def _interval(o: Overall) -> str:
    return f"95% CI {percent(stored(o.low))}-{percent(stored(o.high))}, {o.label}"


def evaluate(config: GateConfig, records: Sequence[RunRecord], comparison: Comparison | None = None) -> list[GateResult]:
    """One result per gate and model (or per gate, for the campaign-wide ones)."""
    results: list[GateResult] = []
    overall = _overall(records)
    if not overall and (config.min_pass_rate is not None or config.min_lower_bound is not None):
        results.append(GateResult("min-pass-rate", False, "no run was recorded"))
    for model, o in overall.items():
        rate = o.rate
        if config.min_pass_rate is not None:
            ok = rate is not None and rate >= config.min_pass_rate
            shown = "no judged run" if rate is None else f"{o.passed}/{o.judged} = {percent(rate)} ({_interval(o)})"
            results.append(GateResult("min-pass-rate", ok,
                                      f"{model}: pass rate {shown} {'>=' if ok else '<'} {config.min_pass_rate:.1%}"))
        if config.min_lower_bound is not None:
            low = o.low
            ok = low is not None and low >= config.min_lower_bound
            shown = "no judged run" if low is None else f"{percent(low)} ({o.passed}/{o.judged}; {_interval(o)})"
            results.append(GateResult("min-lower-bound", ok, f"{model}: 95% lower bound {shown} "
                                      f"{'>=' if ok else '<'} {config.min_lower_bound:.1%}"))
    if config.fail_on_regression:
        if comparison is None:
            results.append(GateResult("fail-on-regression", False, "no earlier campaign to compare with"))
        elif not comparison.models:
            results.append(GateResult("fail-on-regression", False,
                                      f"no model in common with {comparison.then_id}: nothing was compared"))
        for m in comparison.models if comparison else []:
            results.append(GateResult("fail-on-regression", not m.regression,
                                      f"{m.label}: {m.then} -> {m.now}, {m.direction}, {m.verdict} ({m.test})"))
    if config.max_infra_errors is not None:
        infra = sum(1 for r in records if r["failure_mode"] == FailureMode.INFRA_ERROR.value)
        ok = infra <= config.max_infra_errors
        results.append(GateResult("max-infra-errors", ok, f"{infra} infra error(s) "
                                  f"{'<=' if ok else '>'} {config.max_infra_errors} allowed"))
    return results


def exit_status(config: GateConfig, results: Sequence[GateResult], exitstatus: int, other_failures: int,
                infra_errors: int = 0) -> int:
    """The session's exit status given the gates.

    ``exitstatus`` is pytest's; ``other_failures`` counts failed tests that are
    not judged agent runs (harness errors, failed setup, plain tests), which
    ``gate_only`` never hides; nor does it hide ``infra_errors`` (runs lost to
    the endpoint) unless the max-infra-errors gate bounds them. Interrupted,
    usage and internal errors are kept.
    """
    if exitstatus not in (0, 1):
        return exitstatus
    if any(not r.passed for r in results):
        return GATE_FAILED_EXIT
    if config.max_infra_errors is None:
        other_failures += infra_errors
    if config.gate_only and exitstatus == 1 and other_failures == 0:
        return 0
    return exitstatus


def lines(config: GateConfig, results: Sequence[GateResult], final: int, exitstatus: int) -> list[str]:
    out = [f"- {'PASS' if r.passed else 'FAIL'} {r.gate}: {r.detail}" for r in results]
    failed = [r for r in results if not r.passed]
    if failed:
        out.append(f"gates FAILED ({len(failed)} of {len(results)}): the session exits with status {final}")
    elif results:
        out.append(f"gates passed ({len(results)})")
    if config.gate_only and final != exitstatus and final == 0:
        out.append("--agentic-gate-only: failed runs are model failures, judged by the gates only; exit status 0")
    elif config.gate_only and exitstatus == 1 and final == 1:
        out.append("--agentic-gate-only: exit status 1 all the same: a test failed that is not a judged agent run")
    return out
