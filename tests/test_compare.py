"""Campaign comparison: Fisher's exact test on the overall counts, and the per-task paired view."""

from __future__ import annotations

import pytest

from pytest_agentic.verdicts import compare

from pytest_agentic.campaign import stored
from pytest_agentic.campaign.stats import fisher_exact_p, sign_test_p

from .records import NANO_NOW, NANO_THEN, record, scores, write_campaign


def test_the_writeups_plus_five_is_within_noise():
    result = compare.compare(scores(NANO_THEN), scores(NANO_NOW))
    (m,) = result.models
    assert (str(m.then), str(m.now)) == ("10/30", "15/30")
    assert m.p_value == pytest.approx(0.2949, abs=1e-4)
    assert m.verdict == "within noise" and not m.regression and m.direction == "up"
    assert m.moved() == (5, 1, 4)
    assert m.paired_p == pytest.approx(0.21875)
    sentence = m.sentence()
    assert "10/30 then, 15/30 now (+5 passes): within noise" in sentence
    assert "p = 0.295" in sentence
    changes = {row["task"].split()[0]: row["change"] for row in compare.task_rows(result)}
    assert changes["task_01"] == "up" and changes["task_04"] == "down" and changes["task_07"] == "flat"
    assert changes["Total"] == "+5 (within noise)"
    p_values = {row["task"].split()[0]: row["p"] for row in compare.task_rows(result)}
    assert p_values["task_01"] == "0.4" and p_values["Total"] == "0.295"


def test_a_large_change_is_beyond_noise_and_a_drop_is_a_regression():
    low = scores({f"task_{i:02d}": (1 if i <= 3 else 0) for i in range(1, 11)})  # 3/30
    high = scores({f"task_{i:02d}": (3 if i <= 9 else 0) for i in range(1, 11)})  # 27/30
    up = compare.compare(low, high).models[0]
    assert (str(up.then), str(up.now)) == ("3/30", "27/30")
    assert up.verdict == "beyond noise" and up.p_value < 1e-6 and not up.regression
    down = compare.compare(high, low).models[0]
    assert down.regression and down.direction == "down"
    assert "beyond noise" in down.sentence()


def test_infra_errors_are_not_judged():
    then = scores({"t": 2})
    now = scores({"t": 2}) + [record("t", 4, False, mode="infra_error")]
    m = compare.compare(then, now).models[0]
    assert str(m.now) == "2/3" and m.p_value == 1.0


def test_models_match_by_name_or_as_the_single_models():
    then = scores({"t": 3}, model="a") + scores({"t": 0}, model="b")
    now = scores({"t": 1}, model="a") + scores({"t": 3}, model="c")
    result = compare.compare(then, now)
    assert [m.label for m in result.models] == ["a"]
    assert result.unmatched == ["b", "c"]
    single = compare.compare(scores({"t": 3}, model="old"), scores({"t": 0}, model="new"))
    assert single.models[0].label == "old -> new"


def test_the_paired_view_needs_the_same_tasks():
    m = compare.compare(scores({"t1": 3}), scores({"t1": 3, "t2": 0})).models[0]
    assert m.paired_p is None
    assert [t.change for t in m.tasks] == ["flat", "new"]


def test_compare_reads_campaign_folders(tmp_path):
    a = write_campaign(tmp_path / "a", scores(NANO_THEN))
    b = write_campaign(tmp_path / "b", scores(NANO_NOW))
    then, now = stored.load(a), stored.load(b / "runs.jsonl")
    text = compare.markdown(compare.compare(then.records, now.records, then_id=then.id, now_id=now.id))
    assert "| then" in text and "within noise" in text and "p = 0.295" in text
    with pytest.raises(stored.CampaignFolderError, match="no runs.jsonl"):
        stored.load(tmp_path)
    with pytest.raises(stored.CampaignFolderError, match="no such campaign folder"):
        stored.load(tmp_path / "missing")


def test_stats_edges():
    assert fisher_exact_p(0, 0, 3, 3) == 1.0
    assert sign_test_p(0, 0) == 1.0
    assert sign_test_p(6, 0) == pytest.approx(0.03125)


def test_the_command_prints_the_verdicts_of_the_writeup_and_a_constructed_case(tmp_path, capsys):
    a = write_campaign(tmp_path / "2026-05-21-nano", scores(NANO_THEN, model="nano"))
    b = write_campaign(tmp_path / "2026-05-25-nano", scores(NANO_NOW, model="nano"))
    assert compare.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "| nano    | task_04 name_task_04 | 1/3    | 0/3   | down              | 1     |" in out
    assert "| nano    | Total                | 10/30  | 15/30 | +5 (within noise) | 0.295 |" in out
    assert "no single task's change can be beyond noise" in out
    assert ("- nano: 10/30 then, 15/30 now (+5 passes): within noise (Fisher's exact test, two-sided, "
            "p = 0.295, alpha 0.05); paired per task: 5 up, 1 down, 4 flat, sign test p = 0.219, within noise") in out
    low = write_campaign(tmp_path / "low", scores({f"task_{i:02d}": (1 if i <= 3 else 0) for i in range(1, 11)}))
    high = write_campaign(tmp_path / "high", scores({f"task_{i:02d}": (3 if i <= 9 else 0) for i in range(1, 11)}))
    assert compare.main([str(low), str(high)]) == 0
    assert "3/30 then, 27/30 now (+24 passes): beyond noise (Fisher's exact test, two-sided, p = 2.82e-10" \
        in capsys.readouterr().out
    assert compare.main([str(low), str(tmp_path / "missing")]) == 2
