"""Predictions files: validated at load, scored against a campaign's records."""

from __future__ import annotations

import textwrap

import pytest

from pytest_agentic.verdicts import predictions

from .records import record, scores

GOOD = """
model: m
predictions:
  - id: P1
    claim: overall score 22/30
    score: "22/30"
  - id: P2
    task: task_09
    score: "0/3"
  - id: P3
    task: task_02
    score: "3/3"
  - id: P6
    cost_per_pass: [0, 0.003]
  - id: P7
    pass_rate: ">= 0.7"
  - id: F3
    score: "< 20/30"
    falsifier: true
  - id: F4
    task: task_09
    score: ">= 1/3"
    falsifier: true
  - id: P8
    task: task_11
    score: "3/3"
  - id: P5
    claim: quick-fail pattern reproduced
    quick_fails: ">= 1"
  - id: P9
    failures: [7, 8]
    mode: wrong_answer
"""


def write(tmp_path, text):
    path = tmp_path / "predictions.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def qwen_like():
    """22/30 with task_09 at 1/3 and task_02 at 1/3, as in the Qwen3 Coder write-up."""
    per_task = {f"task_{i:02d}": 3 for i in range(1, 11)}
    per_task.update(task_02=1, task_09=1, task_04=2, task_05=2, task_10=1)
    records = scores(per_task, cost=0.0018 * 22 / 30)
    records[-1].update(failure_mode="gave_up_mid_plan")  # task_10 run3
    records[3]["tags"] = {"quick_fail": True}  # task_02 run1, a pass
    return records


def test_scoring_says_held_failed_triggered_and_no_data(tmp_path):
    preds = predictions.load(write(tmp_path, GOOD), ["m"])
    records = qwen_like()
    assert sum(r["passed"] for r in records) == 22
    result = {s.prediction.id: (s.actual, s.result) for s in predictions.score(preds, records)}
    assert result["P1"] == ("22/30", "held")
    assert result["P2"] == ("1/3", "failed")
    assert result["P3"] == ("1/3", "failed")
    assert result["P6"][1] == "held" and result["P6"][0].startswith("$0.0018")
    assert result["P7"][1] == "held"
    assert result["F3"] == ("22/30", "not triggered")
    assert result["F4"] == ("1/3", "triggered")
    assert result["P8"] == ("no runs", "no data")
    assert result["P5"] == ("1 of 30 runs", "held")
    assert result["P9"] == ("7 of 30 runs", "held")  # 8 failures, 7 of them wrong_answer
    tally = predictions.tally(predictions.score(preds, records))
    assert tally == "5/8 predictions held (1 without data); falsifiers triggered: F4"
    text = predictions.markdown(predictions.score(preds, records), "p.yaml")
    assert "| F4 (falsifier)" in text and "task_09 score >= 1/3" in text


def test_scores_compare_as_rates_over_judged_runs(tmp_path):
    preds = predictions.load(write(tmp_path, 'predictions:\n  - {id: P1, score: "2/3"}\n'))
    records = scores({"t": 2}) + [record("t", 4, False, mode="infra_error")]
    assert predictions.score(preds, records)[0].result == "held"


@pytest.mark.parametrize("text, message", [
    ("predictions: 3\n", "expected a mapping with a 'predictions' list"),
    ("predictions: []\nmodels: x\n", "unknown top-level key"),
    ("predictions:\n  - {score: '1/3'}\n", "entry 1: key 'id' is required"),
    ("predictions:\n  - {id: P1, scor: '1/3'}\n", r"entry 1 \(P1\): unknown key 'scor'"),
    ("predictions:\n  - {id: P1}\n", r"entry 1 \(P1\): needs exactly one of the keys"),
    ("predictions:\n  - {id: P1, score: '1/3', pass_rate: 0.3}\n", "needs exactly one"),
    ("predictions:\n  - {id: P1, score: '4/3'}\n", r"key 'score': '4/3' is not k/n"),
    ("predictions:\n  - {id: P1, score: '0.5'}\n", "key 'score' must read"),
    ("predictions:\n  - {id: P1, pass_rate: 1.5}\n", "key 'pass_rate' is a fraction between 0 and 1"),
    ("predictions:\n  - {id: P1, cost_per_pass: [2, 1]}\n", "is empty"),
    ("predictions:\n  - {id: P1, cost_per_pass: 'cheap'}\n", "cannot read the condition"),
    ("predictions:\n  - {id: P1, score: '1/3', falsifier: 'yes'}\n", "key 'falsifier' must be true or false"),
    ("predictions:\n  - {id: P1, score: '1/3'}\n  - {id: P1, score: '2/3'}\n", r"entry 2 \(P1\): key 'id'.*twice"),
    ("predictions:\n  - {id: P1, model: other, score: '1/3'}\n", "key 'model': 'other' is not a model of this"),
    ("predictions: [\n", "not valid YAML"),
    ("predictions:\n  - {id: P1, failures: 2.5}\n", "key 'failures' counts runs"),
    ("predictions:\n  - {id: P1, failures: 2, mode: wrong}\n", "key 'mode' goes with 'failures'"),
    ("predictions:\n  - {id: P1, score: '1/3', mode: wrong_answer}\n", "key 'mode' goes with 'failures'"),
])
def test_bad_files_name_file_entry_and_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(predictions.PredictionsError, match=message) as info:
        predictions.load(path, ["m"])
    assert str(path) in str(info.value)


def test_several_models_need_a_model_per_entry(tmp_path):
    path = write(tmp_path, "predictions:\n  - {id: P1, score: '1/3'}\n")
    with pytest.raises(predictions.PredictionsError, match="key 'model' is needed"):
        predictions.load(path, ["a", "b"])
    assert predictions.load(path, ["a"])[0].model is None
