"""The variants of one models.yaml entry compared pairwise, on the same task instances and seeds.

An entry with ``variants:`` (``run/models.py``) puts each variant in the campaign as a model of its
own, ``NAME[LABEL]``; every variant runs the same tasks, instances and seeds. Each pair of variants of
one entry is compared as two campaigns are (``verdicts/compare.py``): task by task, the paired
mean change with its 95% interval and the sign-flip permutation test when the pairs can reach
alpha, else Fisher's exact test on the pooled runs. The sentence names the better variant when the
difference is beyond noise and says "within noise" otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from ..run.records import RunRecord
from .compare import ALPHA, ModelComparison, compare_model
from ..campaign.stats import points

_VARIANT = re.compile(r"^(?P<base>.+)\[(?P<label>[^\[\]]+)\]$")


def base_of(model: str) -> tuple[str, str] | None:
    """(entry, label) of a variant's id ``entry[label]``, or None for a model that is no variant."""
    m = _VARIANT.match(model)
    return (m["base"], m["label"]) if m else None


def groups(records: Sequence[RunRecord]) -> dict[str, list[str]]:
    """Entries with two or more variants in ``records``: their variant ids, sorted."""
    out: dict[str, set[str]] = {}
    for r in records:
        parsed = base_of(r["model"])
        if parsed:
            out.setdefault(parsed[0], set()).add(r["model"])
    return {base: sorted(ids) for base, ids in sorted(out.items()) if len(ids) >= 2}


def comparisons(records: Sequence[RunRecord], alpha: float = ALPHA) -> list[ModelComparison]:
    """Every pair of variants of one entry: ``model_then`` the first (by id), ``model_now`` the second."""
    out = []
    for ids in groups(records).values():
        for a, b in combinations(ids, 2):
            out.append(compare_model([r for r in records if r["model"] == a], [r for r in records if r["model"] == b],
                                     alpha=alpha, model_then=a, model_now=b))
    return out


_pts = points


def sentence(c: ModelComparison) -> str:
    """One pair in words: the counts, the test, and which variant is better or that it is within noise."""
    a, b = c.model_then, c.model_now
    head = f"{b} vs {a}: {c.now} vs {c.then}"
    if c.basis == "paired" and c.paired is not None:
        d = c.paired
        detail = (f"mean per-task change {_pts(d.mean)} points (95% CI {_pts(d.low)} to {_pts(d.high)}, over "
                  f"{d.tasks} tasks paired on the same instances and seeds), {d.test_name}: p = {d.p_value:.3g}")
    else:
        why = ("fewer than two tasks to pair" if c.paired is None
               else f"{c.paired.tasks} paired tasks cannot reach p < {c.alpha:g}")
        detail = f"Fisher's exact test on the pooled runs ({why}): p = {c.p_value:.3g}"
    if c.beyond_noise and c.direction != "flat":
        better, worse = (b, a) if c.direction == "up" else (a, b)
        verdict = f"{better} is better than {worse}, beyond noise (alpha {c.alpha:g})"
    else:
        verdict = f"the difference is within noise (alpha {c.alpha:g}): neither is shown better"
    return f"{head}; {detail}: {verdict}."


def markdown(records: Sequence[RunRecord]) -> str | None:
    """The summary section comparing variants, or None when the campaign has no entry with two variants."""
    found = comparisons(records)
    if not found:
        return None
    return "".join(f"- {sentence(c)}\n" for c in found)


def as_dicts(records: Sequence[RunRecord]) -> list[dict[str, Any]]:
    return [{"a": c.model_then, "b": c.model_now, "a_score": str(c.then), "b_score": str(c.now),
             "verdict": c.verdict, "verdict_basis": c.basis, "verdict_p_value": c.verdict_p,
             "direction_b_vs_a": c.direction, "paired": c.paired.as_dict() if c.paired else None,
             "sentence": sentence(c)} for c in comparisons(records)]


__all__ = ["as_dicts", "base_of", "comparisons", "groups", "markdown", "sentence"]
