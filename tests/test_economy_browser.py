"""A sweep's report.html in headless Chromium: the model's reasoning folded, the frontier drawn.

The campaign: one scripted entry with two variants, one of which "thinks" (``reasoning_content``,
``run/scripted.py``) and so spends more tokens and dollars for the same passes.
"""

from __future__ import annotations

import shutil

from . import browser
from .helpers import ROOT, campaign_dir
from .test_variants import _scripted_sweep


def _classes(node: browser.Node) -> set[str]:
    return set(node.attrs.get("class", "").split())


def test_reasoning_is_folded_and_the_frontier_drawn(chromium, pytester, tmp_path):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    _scripted_sweep(pytester)
    pytester.runpytest_subprocess("tasks", "-m", "task_09", "--runs", "1", "--agentic-out", "out") \
        .assert_outcomes(passed=2)
    report = campaign_dir(pytester.path / "out") / "report.html"
    dom = browser.parse(browser.dump_dom(report.as_uri(), tmp_path / "profile"))
    main = next(dom.iter("main"))
    # Reasoning: one folded block per assistant turn of the thinking variant, none for the other.
    folded = [d for d in main.iter("details") if "reasoning" in _classes(d)]
    runs = {d.attrs["id"]: d for d in main.iter("details") if "run" in _classes(d)}
    thinking = runs["task_09-run1-sweep-thinking-high"]
    assert folded and all("open" not in d.attrs for d in folded)
    assert len([d for d in thinking.iter("details") if "reasoning" in _classes(d)]) == len(folded)
    assert not [d for d in runs["task_09-run1-sweep-thinking-off"].iter("details") if "reasoning" in _classes(d)]
    summary = next(folded[0].iter("summary")).text
    assert "Reasoning (1199 characters; shown, never judged)" == summary.strip()  # 300 x "hmm" and spaces
    assert "hmm hmm" in next(folded[0].iter("pre")).text
    # The final answer shown is the content, not the reasoning.
    final = [d for d in thinking.iter("div") if "final" in _classes(d)]
    assert final and "hmm" not in final[0].text
    # The frontier: two charts ($ and tokens), the cheaper variant ringed on each, the other marked dominated.
    section = next(n for n in main.iter("section") if n.attrs.get("id") == "frontier")
    charts = [s for s in section.iter("svg") if "frontier-chart" in _classes(s)]
    assert sorted(c.attrs["data-axis"] for c in charts) == ["tokens", "usd"]
    for chart in charts:
        rings = [c for c in chart.iter("circle") if "frontier-ring" in _classes(c)]
        dominated = [c for c in chart.iter("circle") if "dominated" in _classes(c)]
        assert len(rings) == 1 and len(dominated) == 1
        labels = [t.text for t in chart.iter("text") if "series-label" in _classes(t)]
        assert sorted(labels) == ["sweep[thinking=high] (dominated)", "sweep[thinking=off]"]
    words = " ".join(li.text for li in section.iter("li"))
    assert "sweep[thinking=high] is dominated by sweep[thinking=off]" in words
    assert "within noise" in words
