"""Campaign comparison: the paired view over tasks (the verdict), Fisher's exact test on the pooled counts."""

from __future__ import annotations

import pytest

from pytest_agentic.verdicts import compare

from pytest_agentic.campaign import stored
from pytest_agentic.campaign.stats import fisher_exact_p

from .records import NANO_NOW, NANO_THEN, record, scores, write_campaign


def test_the_writeups_plus_five_is_within_noise():
    result = compare.compare(scores(NANO_THEN), scores(NANO_NOW))
    (m,) = result.models
    assert (str(m.then), str(m.now)) == ("10/30", "15/30")
    assert m.p_value == pytest.approx(0.2949, abs=1e-4)
    assert m.verdict == "within noise" and not m.regression and m.direction == "up"
    assert m.moved() == (5, 1, 4)
    # The verdict is paired over the ten tasks (the figures are pinned against independent
    # computations in test_uncertainty.py); Fisher's pooled p stays as a secondary line.
    assert m.basis == "paired" and m.paired is not None and m.paired.tasks == 10
    assert m.paired_p == m.verdict_p == pytest.approx(0.1875)
    sentence = m.sentence()
    assert "10/30 then, 15/30 now (+5 passes): mean per-task change +16.7 points (95% CI -3.6 to +36.9" in sentence
    assert "(1024 flips): p = 0.188: within noise" in sentence
    assert "treating the runs as independent: p = 0.295" in sentence
    assert "29.7 points of overall pass rate; a 10-point change needs 27 runs per task" in sentence
    changes = {row["task"].split()[0]: row["change"] for row in compare.task_rows(result)}
    assert changes["task_01"] == "up" and changes["task_04"] == "down" and changes["task_07"] == "flat"
    assert changes["Total"] == "+5"
    assert changes["Mean"] == "+16.7 pts, 95% CI -3.6 to +36.9 (within noise)"
    p_values = {row["task"].split()[0]: row["p"] for row in compare.task_rows(result)}
    assert p_values["task_01"] == "0.4" and p_values["Total"] == "0.295" and p_values["Mean"] == "0.188"


def test_a_large_change_is_beyond_noise_and_a_drop_is_a_regression():
    low = scores({f"task_{i:02d}": (1 if i <= 3 else 0) for i in range(1, 11)})  # 3/30
    high = scores({f"task_{i:02d}": (3 if i <= 9 else 0) for i in range(1, 11)})  # 27/30
    up = compare.compare(low, high).models[0]
    assert (str(up.then), str(up.now)) == ("3/30", "27/30")
    assert up.verdict == "beyond noise" and up.p_value < 1e-6 and not up.regression
    # Nine tasks up, one flat: 2 of the 1024 sign flips are as extreme.
    assert up.basis == "paired" and up.verdict_p == pytest.approx(2 / 512)
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


def test_the_paired_view_pairs_the_tasks_both_ran():
    m = compare.compare(scores({"t1": 3}), scores({"t1": 3, "t2": 0})).models[0]
    assert m.paired_p is None and m.basis == "pooled"  # one task in common: nothing to pair
    assert [t.change for t in m.tasks] == ["flat", "new"]
    assert "fewer than two tasks in common to pair" in m.sentence()
    then = scores({f"t{i}": 0 for i in range(8)})
    now = scores({f"t{i}": 3 for i in range(1, 9)})  # t0 gone, t8 new: seven tasks both ran, all up
    m = compare.compare(then, now).models[0]
    assert m.paired is not None and (m.paired.tasks, m.paired.up) == (7, 7)
    assert m.basis == "paired" and m.verdict_p == pytest.approx(2 / 2 ** 7) and m.verdict == "beyond noise"


def test_too_few_tasks_for_the_paired_test_fall_back_to_fisher_and_say_so():
    m = compare.compare(scores({"a": 3, "b": 3, "c": 3}), scores({"a": 0, "b": 0, "c": 0})).models[0]
    assert m.paired is not None and m.paired.p_value == pytest.approx(0.25)  # 2 of 8 flips: the smallest p
    assert m.basis == "pooled" and m.verdict == "beyond noise" and m.regression
    assert m.test == "Fisher's exact test, p = 4.11e-05"
    assert "a paired test over 3 tasks cannot reach p < 0.05" in m.sentence()


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


def test_the_command_prints_the_verdicts_of_the_writeup_and_a_constructed_case(tmp_path, capsys):
    a = write_campaign(tmp_path / "2026-05-21-nano", scores(NANO_THEN, model="nano"))
    b = write_campaign(tmp_path / "2026-05-25-nano", scores(NANO_NOW, model="nano"))
    assert compare.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "| nano    | task_04 name_task_04            | 1/3    | 0/3   | down" in out
    assert "| nano    | Total                           | 10/30  | 15/30 | +5         " in out
    assert ("| nano    | Mean per-task change (10 tasks) | -      | -     | +16.7 pts, 95% CI -3.6 to +36.9 "
            "(within noise) | 0.188 |") in out
    assert "no single task's change can be beyond noise" in out
    assert ("- nano: 10/30 then, 15/30 now (+5 passes): mean per-task change +16.7 points (95% CI -3.6 to +36.9, "
            "paired t over 10 tasks; 5 up, 1 down, 4 flat), exact sign-flip permutation test over 10 tasks "
            "(1024 flips): p = 0.188: within noise (alpha 0.05); pooled Fisher's exact test, treating the runs as "
            "independent: p = 0.295; minimum detectable change (10 tasks x 3 runs, paired by task, 80% power, "
            "alpha 0.05): 29.7 points of overall pass rate; a 10-point change needs 27 runs per task") in out
    low = write_campaign(tmp_path / "low", scores({f"task_{i:02d}": (1 if i <= 3 else 0) for i in range(1, 11)}))
    high = write_campaign(tmp_path / "high", scores({f"task_{i:02d}": (3 if i <= 9 else 0) for i in range(1, 11)}))
    assert compare.main([str(low), str(high)]) == 0
    out = capsys.readouterr().out
    assert "3/30 then, 27/30 now (+24 passes): mean per-task change +80.0 points" in out
    assert "p = 0.00391: beyond noise" in out and "treating the runs as independent: p = 2.82e-10" in out
    assert compare.main([str(low), str(tmp_path / "missing")]) == 2


def test_compare_help_names_the_console_script(capsys):
    """``agentic-compare --help`` shows the command the user typed, not ``python -m ...``."""
    with pytest.raises(SystemExit):
        compare.main(["--help"])
    usage = capsys.readouterr().out
    assert usage.startswith("usage: agentic-compare ") and "python -m" not in usage
