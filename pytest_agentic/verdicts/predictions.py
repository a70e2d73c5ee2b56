"""Predictions written before a campaign, scored after it.

The file (YAML)::

    model: qwen3-coder-30b          # optional: the model the entries are about (default: the only one run)
    predictions:
      - id: P1
        claim: overall score 22/30   # optional free text, shown in the table
        score: "22/30"               # passes out of judged runs; "k/n" means exactly, or ">= k/n", "< k/n", ...
      - id: P2
        task: task_09                # optional: one task instead of the whole campaign
        score: "0/3"
      - id: P6
        cost_per_pass: [0, 0.003]    # dollars, an inclusive range [low, high], or ">= x", "< x", ...
      - id: P5
        quick_fails: ">= 1"          # runs that answered without a tool call
      - id: P9
        failures: ">= 10"            # failed judged runs, optionally of one mode:
        mode: wrong_answer
      - id: F4
        task: task_09
        score: ">= 1/3"
        falsifier: true              # a condition that, when met, falsifies the campaign's hypothesis

Each entry has an ``id``, optionally ``claim``, ``model``, ``task``, ``mode``
and ``falsifier``, and exactly one measure: ``score``, ``pass_rate`` (0..1),
``cost_per_pass`` or ``total_cost`` (dollars), ``failures`` or ``quick_fails``
(counts of judged runs). A score compares as a pass
rate over the judged runs (infra errors are not judged), so ">= 20/30" reads
"a pass rate of at least 2/3". A prediction *held* or *failed*; a falsifier was
*triggered* (its condition was met) or *not triggered*; either has *no data*
when the campaign has no judged run (or no price) for what it names.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..campaign import tables
from ..run.records import FailureMode, RunRecord
from ..run.yamlfile import load_yaml

MEASURES = ("score", "pass_rate", "cost_per_pass", "total_cost", "failures", "quick_fails")
KEYS = ("id", "claim", "model", "task", "mode", "falsifier", *MEASURES)
COUNTS = ("failures", "quick_fails")
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq, ">": operator.gt, "<": operator.lt, "=": operator.eq,
}
_CONDITION = re.compile(r"^\s*(>=|<=|==|=|>|<)?\s*([0-9.eE+-]+)\s*(?:/\s*([0-9]+))?\s*$")


class PredictionsError(ValueError):
    """A predictions file that cannot be used; the message names file, entry and key."""


@dataclass(frozen=True)
class Condition:
    """``op value`` (value a Fraction), or an inclusive range ``[low, high]``."""

    op: str | None
    value: Fraction | None = None
    low: Fraction | None = None
    high: Fraction | None = None
    text: str = ""

    def holds(self, actual: Fraction) -> bool:
        if self.op is None:
            assert self.low is not None and self.high is not None
            return self.low <= actual <= self.high
        assert self.value is not None
        return _OPS[self.op](actual, self.value)


@dataclass(frozen=True)
class Prediction:
    id: str
    measure: str
    condition: Condition
    claim: str = ""
    model: str | None = None
    task: str | None = None
    mode: str | None = None
    falsifier: bool = False

    @property
    def expected(self) -> str:
        where = self.task or "overall"
        what = f"{self.mode} failures" if self.mode else self.measure.replace("_", " ")
        return f"{where} {what} {self.condition.text}"


@dataclass(frozen=True)
class Scored:
    prediction: Prediction
    actual: str
    result: str  # held | failed | triggered | not triggered | no data


def _condition(where: str, measure: str, raw: Any) -> Condition:
    if isinstance(raw, list):
        if measure == "score":
            raise PredictionsError(f"{where}: key 'score' takes \"k/n\" or \"OP k/n\", not a range; "
                                   "use 'pass_rate' for a range")
        if len(raw) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in raw):
            raise PredictionsError(f"{where}: key {measure!r}: a range is two numbers [low, high], got {raw!r}")
        low, high = Fraction(str(raw[0])), Fraction(str(raw[1]))
        if low > high:
            raise PredictionsError(f"{where}: key {measure!r}: the range [{raw[0]}, {raw[1]}] is empty")
        return Condition(None, low=low, high=high, text=f"in [{raw[0]}, {raw[1]}]")
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        example = '"22/30" or ">= 20/30"' if measure == "score" else '">= 0.5" or [0.4, 0.6]'
        raise PredictionsError(f"{where}: key {measure!r} must be a condition such as {example}, got {raw!r}")
    m = _CONDITION.match(str(raw))
    if not m:
        raise PredictionsError(f"{where}: key {measure!r}: cannot read the condition {raw!r}")
    op, number, denominator = m.group(1), m.group(2), m.group(3)
    try:
        value = Fraction(number)
    except (ValueError, ZeroDivisionError):
        raise PredictionsError(f"{where}: key {measure!r}: {number!r} is not a number") from None
    if measure == "score":
        if denominator is None or int(denominator) == 0:
            raise PredictionsError(f"{where}: key 'score' must read \"k/n\" (passes out of runs), got {raw!r}")
        if value.denominator != 1 or value < 0 or value > int(denominator):
            raise PredictionsError(f"{where}: key 'score': {raw!r} is not k/n with 0 <= k <= n")
        text = f"{op + ' ' if op and op not in ('=', '==') else ''}{int(value)}/{denominator}"
        value = value / int(denominator)
    else:
        if denominator is not None:
            raise PredictionsError(f"{where}: key {measure!r} takes a number, got {raw!r}")
        if measure in COUNTS and (value.denominator != 1 or value < 0):
            raise PredictionsError(f"{where}: key {measure!r} counts runs: a whole number, got {raw!r}")
        if measure == "pass_rate" and not 0 <= value <= 1:
            raise PredictionsError(f"{where}: key 'pass_rate' is a fraction between 0 and 1, got {raw!r}")
        text = f"{op or '=='} {number}"
    return Condition(op or "==", value=value, text=text)


def load(path: str | Path, models: Sequence[str] | None = None) -> list[Prediction]:
    """Read and validate a predictions file; ``models``: the models this session runs (checked when given)."""
    path = Path(path)
    data = load_yaml(path, PredictionsError, "predictions file not found")
    if not isinstance(data, dict) or not isinstance(data.get("predictions"), list):
        raise PredictionsError(f"{path}: expected a mapping with a 'predictions' list at the top")
    unknown = set(data) - {"model", "predictions"}
    if unknown:
        raise PredictionsError(f"{path}: unknown top-level key(s) {sorted(unknown)}; expected 'model', 'predictions'")
    default_model = data.get("model")
    if default_model is not None and not isinstance(default_model, str):
        raise PredictionsError(f"{path}: key 'model' must be a model name, got {default_model!r}")
    out: list[Prediction] = []
    for n, raw in enumerate(data["predictions"], start=1):
        where = f"{path}: entry {n}"
        if not isinstance(raw, dict):
            raise PredictionsError(f"{where}: expected a mapping of keys, got {type(raw).__name__}")
        pid = raw.get("id")
        if not isinstance(pid, (str, int)) or isinstance(pid, bool) or not str(pid).strip():
            raise PredictionsError(f"{where}: key 'id' is required (e.g. P1 or F3)")
        pid = str(pid)
        where = f"{path}: entry {n} ({pid})"
        for key in raw:
            if key not in KEYS:
                raise PredictionsError(f"{where}: unknown key {key!r}; known keys: {', '.join(KEYS)}")
        if pid in {p.id for p in out}:
            raise PredictionsError(f"{where}: key 'id': {pid!r} is used twice")
        measures = [k for k in MEASURES if k in raw]
        if len(measures) != 1:
            raise PredictionsError(f"{where}: needs exactly one of the keys {', '.join(MEASURES)}, "
                                   f"got {', '.join(measures) or 'none'}")
        for key in ("claim", "model", "task"):
            if key in raw and not isinstance(raw[key], str):
                raise PredictionsError(f"{where}: key {key!r} must be a string, got {raw[key]!r}")
        if "falsifier" in raw and not isinstance(raw["falsifier"], bool):
            raise PredictionsError(f"{where}: key 'falsifier' must be true or false, got {raw['falsifier']!r}")
        modes = [m.value for m in FailureMode]
        if "mode" in raw and (measures[0] != "failures" or raw["mode"] not in modes):
            raise PredictionsError(f"{where}: key 'mode' goes with 'failures' and names a failure mode "
                                   f"({', '.join(modes)}), got {raw['mode']!r}")
        model = raw.get("model", default_model)
        if models is not None and model is not None and model not in models:
            raise PredictionsError(f"{where}: key 'model': {model!r} is not a model of this session "
                                   f"({', '.join(models)})")
        if models is not None and model is None and len(models) > 1:
            raise PredictionsError(f"{where}: key 'model' is needed: this session runs {', '.join(models)}")
        out.append(Prediction(id=pid, measure=measures[0], condition=_condition(where, measures[0], raw[measures[0]]),
                              claim=raw.get("claim", ""), model=model, task=raw.get("task"), mode=raw.get("mode"),
                              falsifier=raw.get("falsifier", False)))
    return out


def _actual(p: Prediction, records: Sequence[RunRecord]) -> tuple[Fraction | None, str]:
    model = p.model or (records[0]["model"] if records else None)
    runs = [r for r in records if r["model"] == model and (p.task is None or r["task"] == p.task)]
    judged = [r for r in runs if r["failure_mode"] != FailureMode.INFRA_ERROR.value]
    passed = sum(1 for r in judged if r["passed"])
    if p.measure in ("score", "pass_rate"):
        if not judged:
            return None, "no runs"
        rate = Fraction(passed, len(judged))
        shown = f"{passed}/{len(judged)}" if p.measure == "score" else f"{float(rate):.3f} ({passed}/{len(judged)})"
        return rate, shown
    if p.measure in COUNTS:
        if not judged:
            return None, "no runs"
        if p.measure == "quick_fails":
            n = sum(1 for r in judged if r["tags"].get("quick_fail"))
        else:
            n = sum(1 for r in judged if not r["passed"] and (p.mode is None or r["failure_mode"] == p.mode))
        return Fraction(n), f"{n} of {len(judged)} runs"
    rows = tables.cost_breakdown(runs)
    if not rows:
        return None, "no runs"
    key = "cost_per_pass_usd" if p.measure == "cost_per_pass" else "total_cost_usd"
    value = rows[0][key]
    if value is None:
        return None, "no passes" if p.measure == "cost_per_pass" and rows[0]["total_cost_usd"] is not None \
            else "price unknown"
    return Fraction(str(value)), f"${value:.6g}"


def score(predictions: Sequence[Prediction], records: Sequence[RunRecord]) -> list[Scored]:
    out = []
    for p in predictions:
        value, shown = _actual(p, records)
        if value is None:
            result = "no data"
        elif p.condition.holds(value):
            result = "triggered" if p.falsifier else "held"
        else:
            result = "not triggered" if p.falsifier else "failed"
        out.append(Scored(p, shown, result))
    return out


def rows(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    return [{"id": s.prediction.id + (" (falsifier)" if s.prediction.falsifier else ""),
             "prediction": s.prediction.claim or "-", "expected": s.prediction.expected,
             "actual": s.actual, "result": s.result} for s in scored]


def tally(scored: Sequence[Scored]) -> str:
    preds = [s for s in scored if not s.prediction.falsifier]
    fals = [s for s in scored if s.prediction.falsifier]
    parts = []
    if preds:
        held = sum(1 for s in preds if s.result == "held")
        nodata = sum(1 for s in preds if s.result == "no data")
        parts.append(f"{held}/{len(preds)} predictions held" + (f" ({nodata} without data)" if nodata else ""))
    if fals:
        hit = [s.prediction.id for s in fals if s.result == "triggered"]
        parts.append(f"falsifiers triggered: {', '.join(hit)}" if hit else f"no falsifier triggered (of {len(fals)})")
    return "; ".join(parts) or "no predictions"


def markdown(scored: Sequence[Scored], source: str) -> str:
    from ..campaign.summary import markdown_table

    return f"From `{source}`, written before the campaign. {tally(scored)}.\n\n" + markdown_table(rows(scored))
