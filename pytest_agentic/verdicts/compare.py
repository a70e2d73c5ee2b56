"""Comparison of a campaign with an earlier one: per task then/now, and whether the change is beyond noise.

Both campaigns ran the same tasks, so the verdict is paired by task (Miller, "Adding Error
Bars to Evals", arXiv 2411.00640): the mean per-task change of pass rate, its paired 95%
interval (t over the tasks), and the sign-flip permutation test over the tasks both campaigns
judged (exact up to 16 tasks), two-sided, at ``alpha`` (``pytest_agentic.campaign.paired``).
Fisher's exact test on the pooled pass/fail counts, which treats every run as independent,
is kept as a secondary line. With fewer than six tasks in common the paired test cannot give
p < 0.05 at all (its smallest p is 2 / 2^tasks); the verdict then falls back to Fisher's test
and says so. Each comparison also says the smallest change its design could detect with 80%
power (``pytest_agentic.campaign.power``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..run.records import FailureMode, RunRecord
from ..campaign.paired import PairedDifference, paired_difference
from ..campaign.power import Power, comparison_power
from ..campaign.stats import fisher_exact_p, points
from .revisions import name as revision_name, of as revision_of

ALPHA = 0.05


@dataclass(frozen=True)
class Count:
    passed: int
    judged: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.judged if self.judged else None

    def __str__(self) -> str:
        return f"{self.passed}/{self.judged}"


@dataclass(frozen=True)
class TaskChange:
    task: str
    name: str
    then: Count | None
    now: Count | None
    #: The task's content hash differs between the two campaigns: not the same test then and now.
    changed: bool = False
    #: (then, now) benchmark revisions, when the task changed between campaigns of different revisions.
    revised: tuple[int | None, int | None] | None = None

    @property
    def changed_text(self) -> str:
        """What the change column adds: '' or '; task changed' or '; revision 2 -> 3'."""
        if self.revised is not None:
            return f"; {revision_name(self.revised[0])} -> {self.revised[1]}"
        return "; task changed" if self.changed else ""

    @property
    def p_value(self) -> float | None:
        """Fisher's exact test on this task's counts (None when one side has no runs)."""
        if self.then is None or self.now is None or not self.then.judged or not self.now.judged:
            return None
        return fisher_exact_p(self.now.passed, self.now.judged, self.then.passed, self.then.judged)

    @property
    def change(self) -> str:
        if self.then is None:
            return "new"
        if self.now is None:
            return "gone"
        a, b = self.then.rate, self.now.rate
        if a is None or b is None:
            return "no data"
        return "up" if b > a else "down" if b < a else "flat"


_points = points


@dataclass(frozen=True)
class ModelComparison:
    model_then: str
    model_now: str
    then: Count
    now: Count
    #: Fisher's exact test on the pooled counts (secondary; the verdict when pairing cannot decide).
    p_value: float
    alpha: float
    tasks: list[TaskChange] = field(default_factory=list)
    #: The sign-flip permutation p-value over the tasks both judged; None under two such tasks.
    paired_p: float | None = None
    #: The paired comparison over the tasks both campaigns judged; None under two such tasks.
    paired: PairedDifference | None = None
    #: The smallest change this comparison's design detects with 80% power.
    power: Power | None = None

    @property
    def label(self) -> str:
        return self.model_now if self.model_then == self.model_now else f"{self.model_then} -> {self.model_now}"

    @property
    def basis(self) -> str:
        """'paired' when the paired test can decide at ``alpha``, else 'pooled' (Fisher)."""
        return "paired" if self.paired is not None and self.paired.can_reach(self.alpha) else "pooled"

    @property
    def verdict_p(self) -> float:
        """The p-value the verdict rests on."""
        return self.paired.p_value if self.basis == "paired" and self.paired is not None else self.p_value

    @property
    def test(self) -> str:
        """The verdict's test and p-value, in a few words."""
        if self.basis == "paired" and self.paired is not None:
            return f"sign-flip test over {self.paired.tasks} tasks, p = {self.verdict_p:.3g}"
        return f"Fisher's exact test, p = {self.p_value:.3g}"

    @property
    def beyond_noise(self) -> bool:
        return self.verdict_p < self.alpha

    @property
    def verdict(self) -> str:
        return "beyond noise" if self.beyond_noise else "within noise"

    @property
    def direction(self) -> str:
        if self.basis == "paired" and self.paired is not None:
            change = self.paired.mean
            return "flat" if abs(change) < 1e-12 else "up" if change > 0 else "down"
        a, b = self.then.rate, self.now.rate
        if a is None or b is None or a == b:
            return "flat"
        return "up" if b > a else "down"

    @property
    def regression(self) -> bool:
        """A drop of the pass rate that is beyond noise."""
        return self.direction == "down" and self.beyond_noise

    @property
    def changed_tasks(self) -> list[str]:
        return [t.task for t in self.tasks if t.changed]

    def moved(self) -> tuple[int, int, int]:
        changes = [t.change for t in self.tasks]
        return changes.count("up"), changes.count("down"), changes.count("flat")

    def _paired_text(self) -> str:
        d = self.paired
        assert d is not None
        return (f"mean per-task change {_points(d.mean)} points (95% CI {_points(d.low)} to {_points(d.high)}, "
                f"paired t over {d.tasks} tasks; {d.up} up, {d.down} down, {d.flat} flat), {d.test_name}: "
                f"p = {d.p_value:.3g}")

    def sentence(self) -> str:
        delta = self.now.passed - self.then.passed
        head = f"{self.label}: {self.then} then, {self.now} now ({delta:+d} passes): "
        if self.basis == "paired":
            text = (f"{head}{self._paired_text()}: {self.verdict} (alpha {self.alpha:g}); pooled Fisher's exact "
                    f"test, treating the runs as independent: p = {self.p_value:.3g}")
        else:
            text = (f"{head}{self.verdict} (Fisher's exact test, two-sided, p = {self.p_value:.3g}, "
                    f"alpha {self.alpha:g}, pooled over the runs")
            if self.paired is None:
                text += ": fewer than two tasks in common to pair)"
            else:
                text += (f": a paired test over {self.paired.tasks} tasks cannot reach p < {self.alpha:g}); "
                         f"paired: {self._paired_text()}")
        if self.power is not None:
            text += f"; {self.power.sentence()}"
        if self.changed_tasks:
            revised = next((t.revised for t in self.tasks if t.revised), None)
            between = f"{revision_name(revised[0])} then, {revision_name(revised[1])} now; " if revised else ""
            text += (f"; caveat: {len(self.changed_tasks)} task(s) changed between the campaigns ({between}content "
                     f"hash differs: {', '.join(self.changed_tasks)}), so their then and now are not the same test")
        return text


@dataclass(frozen=True)
class Comparison:
    then_id: str
    now_id: str
    models: list[ModelComparison]
    #: Models found in only one of the two campaigns.
    unmatched: list[str] = field(default_factory=list)
    #: The (then, now) benchmark revisions, when they differ.
    revisions: tuple[int | None, int | None] | None = None
    #: What the two campaigns were measured with where it differs (``campaign.sessions.versus``): the
    #: pytest-agentic or litellm release, the call route.
    measured_with: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[ModelComparison]:
        return [m for m in self.models if m.regression]


def _judged(records: Sequence[RunRecord]) -> list[RunRecord]:
    return [r for r in records if r["failure_mode"] != FailureMode.INFRA_ERROR.value]


def count(records: Sequence[RunRecord]) -> Count:
    judged = _judged(records)
    return Count(sum(1 for r in judged if r["passed"]), len(judged))


def _changed(then: Sequence[RunRecord], now: Sequence[RunRecord]) -> bool:
    """Whether a task's content hash differs between two campaigns (unknown hashes: not said to differ)."""
    a = {h for r in then if (h := r["task_hash"])}
    b = {h for r in now if (h := r["task_hash"])}
    return bool(a and b and a != b)


def compare_model(then: Sequence[RunRecord], now: Sequence[RunRecord], *, alpha: float = ALPHA,
                  model_then: str = "", model_now: str = "",
                  revised: tuple[int | None, int | None] | None = None) -> ModelComparison:
    """Compare one model's runs of two campaigns (``revised``: their benchmark revisions, when they differ)."""
    names: dict[str, str] = {}
    by_task: dict[str, tuple[list[RunRecord], list[RunRecord]]] = {}
    for side, records in ((0, then), (1, now)):
        for r in records:
            names.setdefault(r["task"], r["task_name"])
            by_task.setdefault(r["task"], ([], []))[side].append(r)
    tasks = [TaskChange(task, names[task], count(a) if a else None, count(b) if b else None, _changed(a, b),
                        revised if _changed(a, b) else None)
             for task, (a, b) in sorted(by_task.items())]
    total_then, total_now = count(then), count(now)
    p = fisher_exact_p(total_now.passed, total_now.judged, total_then.passed, total_then.judged)
    # The tasks both campaigns judged at least one run of: the pairs.
    common = [(t.then, t.now) for t in tasks
              if t.then is not None and t.now is not None and t.then.judged and t.now.judged]
    paired = None
    if len(common) >= 2:
        paired = paired_difference([a.passed / a.judged for a, _ in common], [b.passed / b.judged for _, b in common])
    power = comparison_power([(a.passed, a.judged) for a, _ in common], [(b.passed, b.judged) for _, b in common],
                             alpha=alpha)
    return ModelComparison(model_then=model_then, model_now=model_now, then=total_then, now=total_now,
                           p_value=p, alpha=alpha, tasks=tasks, paired_p=paired.p_value if paired else None,
                           paired=paired, power=power)


def compare(then: Sequence[RunRecord], now: Sequence[RunRecord], *, then_id: str = "then", now_id: str = "now",
            alpha: float = ALPHA, revisions: tuple[int | None, int | None] | None = None,
            measured_with: Sequence[str] = ()) -> Comparison:
    """Compare two campaigns model by model (by name; two single-model campaigns are compared as such).

    ``revisions``: the (then, now) benchmark revisions; when they differ, a task that changed says so."""
    models_then = sorted({r["model"] for r in then})
    models_now = sorted({r["model"] for r in now})
    pairs = [(m, m) for m in models_now if m in models_then]
    if not pairs and len(models_then) == 1 and len(models_now) == 1:
        pairs = [(models_then[0], models_now[0])]
    # revisions known on both sides and different (a campaign that records none says nothing)
    differing = revisions if revisions and None not in revisions and revisions[0] != revisions[1] else None
    matched = {a for a, _ in pairs} | {b for _, b in pairs}
    unmatched = sorted((set(models_then) | set(models_now)) - matched)
    out = []
    for a, b in pairs:
        out.append(compare_model([r for r in then if r["model"] == a], [r for r in now if r["model"] == b],
                                 alpha=alpha, model_then=a, model_now=b, revised=differing))
    return Comparison(then_id=then_id, now_id=now_id, models=out, unmatched=unmatched, revisions=differing,
                      measured_with=list(measured_with))


def task_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """The per-task table: task, then, now, change; a total row and a mean per-task change row per model."""
    rows = []
    for m in comparison.models:
        for t in m.tasks:
            p = t.p_value
            rows.append({"model": m.label, "task": f"{t.task} {t.name}".strip(),
                         "then": str(t.then) if t.then else "-", "now": str(t.now) if t.now else "-",
                         "change": t.change + t.changed_text,
                         "p": "-" if p is None else f"{p:.3g}"})
        delta = m.now.passed - m.then.passed
        pooled = f" ({m.verdict})" if m.basis == "pooled" else ""
        rows.append({"model": m.label, "task": "Total", "then": str(m.then), "now": str(m.now),
                     "change": f"{delta:+d}{pooled}", "p": f"{m.p_value:.3g}"})
        if m.paired is not None:
            d = m.paired
            verdict = f" ({m.verdict})" if m.basis == "paired" else ""
            rows.append({"model": m.label, "task": f"Mean per-task change ({d.tasks} tasks)", "then": "-",
                         "now": "-", "change": f"{_points(d.mean)} pts, 95% CI {_points(d.low)} to {_points(d.high)}"
                                               f"{verdict}", "p": f"{d.p_value:.3g}"})
    return rows


def markdown(comparison: Comparison) -> str:
    from ..campaign.summary import markdown_table

    parts = [f"Then: `{comparison.then_id}`; now: `{comparison.now_id}`. Infra errors are not judged. "
             "p: Fisher's exact test, two-sided, per task and on the pooled total; on the mean per-task change, "
             "the sign-flip permutation test over the tasks both campaigns ran, with the paired 95% interval "
             "(t over tasks). The verdict is the paired test's, unless too few tasks are in common for it to "
             "reach the significance level (then Fisher's on the total)."]
    sides = [c for m in comparison.models for t in m.tasks for c in (t.then, t.now) if c is not None]
    if sides and max(c.judged for c in sides) <= 3:
        parts.append(" With three runs or fewer a task, no single task's change can be beyond noise "
                     "(0/3 against 3/3 gives p = 0.1): the total and the paired view are what can.")
    parts.append("\n\n")
    if comparison.models:
        parts.append(markdown_table(task_rows(comparison)))
        parts.append("\n")
        parts.extend(f"- {m.sentence()}\n" for m in comparison.models)
    else:
        parts.append("No model in common: nothing to compare.\n")
    changed = sorted({t for m in comparison.models for t in m.changed_tasks})
    if comparison.revisions is not None:
        then, now = comparison.revisions
        parts.append(f"- benchmark {revision_name(then)} then, {revision_name(now)} now: "
                     + (f"{', '.join(changed)} differ between them, per task above; the other tasks are the same test\n"
                        if changed else "no task records a content hash that differs\n"))
    if changed:
        parts.append(f"- changed tasks: {', '.join(changed)} have another content hash than in `{comparison.then_id}` "
                     "(the benchmark revised them); their rows compare different tests\n")
    if comparison.measured_with:
        parts.append(f"- measured with: {'; '.join(comparison.measured_with)}: a change between the two may come "
                     "from these as well as from the model\n")
    if comparison.unmatched:
        parts.append(f"- in one campaign only: {', '.join(comparison.unmatched)}\n")
    return "".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    """Compare two stored campaigns without a pytest session: ``agentic-compare THEN NOW``."""
    import argparse
    import sys

    from ..campaign import sessions, stored

    parser = argparse.ArgumentParser(prog="agentic-compare",
                                     description="Compare two campaign folders: per-task then/now, the mean "
                                                 "per-task change with its paired 95% interval, and whether it is "
                                                 "beyond noise (sign-flip permutation test over the tasks).")
    parser.add_argument("then", help="the earlier campaign folder")
    parser.add_argument("now", help="the later campaign folder")
    parser.add_argument("--alpha", type=float, default=ALPHA, help=f"significance level (default {ALPHA})")
    args = parser.parse_args(argv)
    try:
        a, b = stored.load(args.then), stored.load(args.now)
    except stored.CampaignFolderError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(markdown(compare(a.records, b.records, then_id=a.id, now_id=b.id, alpha=args.alpha,
                                      revisions=(revision_of(a.manifest), revision_of(b.manifest)),
                                      measured_with=sessions.versus(sessions.earlier(a.manifest),
                                                                    sessions.earlier(b.manifest)))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
