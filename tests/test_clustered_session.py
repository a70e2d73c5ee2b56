"""End to end: a bimodal campaign (five tasks at 3/3, five at 0/3) shows the task-clustered interval everywhere.

Fifteen passes in thirty runs read 33%-67% if the runs were independent; clustered by task the
95% interval is 12.3%-87.7%. The terminal, summary.md, pass_rate_by_task.csv (ALL row),
campaign.json, the leaderboard and the gates must all carry the wide one.
"""

from __future__ import annotations

import csv
import json
import sys

from pytest_agentic.verdicts.gates import GATE_FAILED_EXIT

from .helpers import campaign_dir, runs

WIDE = "12.3%-87.7%"


def bimodal_suite() -> str:
    """Ten tasks the scripted oracle answers '41': the first five expect it, the last five expect '42'."""
    parts = ["from pytest_agentic import Final, TaskInstance, ToolCall, task\n\n",
             "def build(seed):\n"
             "    return TaskInstance(prompt='What is in answer.txt?', files={'answer.txt': '41'}, tools=('fs_read',),\n"
             "                        reference=[ToolCall('fs_read', {'path': 'answer.txt'}), Final('41')])\n\n"]
    for n in range(1, 11):
        expected = "41" if n <= 5 else "42"
        parts.append(f"@task('bi_{n:02d}', 'bimodal_{n:02d}', build=build)\n"
                     f"def test_bimodal_{n:02d}(agent):\n"
                     f"    assert agent.run().final_answer == '{expected}'\n\n")
    return "".join(parts)


def test_a_bimodal_campaign_shows_the_clustered_interval_everywhere(pytester):
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle:\n    model: agentic-scripted/oracle\n"
                                      "    price: {input_per_token: 0.0, output_per_token: 0.0}\n")
    pytester.makepyfile(test_bimodal=bimodal_suite())
    # Wilson's lower bound over the 30 runs (33.2%) would pass a 20% gate; the clustered one (12.3%) fails it.
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", "--agentic-out", "out",
                                           "--agentic-gate-only", "--agentic-min-pass-rate", "0.4",
                                           "--agentic-min-lower-bound", "0.2")
    result.assert_outcomes(passed=15, failed=15)
    assert result.ret == GATE_FAILED_EXIT
    result.stdout.fnmatch_lines([  # the verdict first, then the tables
        f"- oracle: 15/30 = 50.0%, 95% CI {WIDE} (task-clustered t, 9 df, over 10 tasks; standard error 16.7 "
        "points, design effect 3.33); as if the 30 runs were independent (Wilson): 33.2%-66.8%",
        "- oracle: minimum detectable change (10 tasks x 3 runs): not computable: every task passed all or none*",
        f"- PASS min-pass-rate: oracle: pass rate 15/30 = 50.0% (95% CI {WIDE}, task-clustered t, 9 df) >= 40.0%",
        f"- FAIL min-lower-bound: oracle: 95% lower bound 12.3% (15/30; 95% CI {WIDE}, task-clustered t, 9 df) "
        "< 20.0%",
        "*95% CI (task: Wilson; ALL: task-clustered)*",
        f"*oracle*ALL*15/30*50.0%*{WIDE}*",
    ])
    folder = campaign_dir(pytester.path / "out")
    assert sum(r["passed"] for r in runs(folder)) == 15

    summary = (folder / "summary.md").read_text()
    assert f"| {WIDE} " in summary and "## Overall uncertainty and power" in summary
    assert "per task, Wilson over its runs" in summary and "arXiv 2411.00640" in summary
    assert "FAIL min-lower-bound: oracle: 95% lower bound 12.3%" in summary

    with (folder / "pass_rate_by_task.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    everything = next(r for r in rows if r["task"] == "ALL")
    assert (everything["ci95_low"], everything["ci95_high"], everything["ci95_method"]) == \
        ("0.123", "0.877", "task-clustered t, 9 df")
    assert (everything["wilson95_low"], everything["wilson95_high"]) == ("0.3315", "0.6685")
    assert {r["ci95_method"] for r in rows if r["task"] != "ALL"} == {"Wilson"}

    manifest = json.loads((folder / "campaign.json").read_text())
    overall = manifest["overall"]["oracle"]
    assert (overall["low"], overall["high"], overall["method"], overall["tasks"]) == (0.123, 0.877, "clustered", 10)
    assert overall["power"]["mdc"] is None and "no run-to-run noise" in overall["power"]["reason"]
    assert manifest["gates"]["passed"] is False

    # The leaderboard in its own process: pytester drops modules first imported during the test
    # (numpy cannot be loaded twice in one process), and this is how users run it anyway.
    board = pytester.run(sys.executable, "-m", "pytest_agentic.verdicts.leaderboard", "out")
    assert board.ret == 0
    board.stdout.fnmatch_lines(["*95% CI (task-clustered)*", f"*oracle*15/30*50.0%*{WIDE}*"])
    board = pytester.run(sys.executable, "-m", "pytest_agentic.verdicts.leaderboard", "out", "--format", "csv")
    row = next(csv.DictReader(board.stdout.lines))
    assert (row["ci95_low"], row["ci95_high"], row["tasks"]) == ("0.123", "0.877", "10")
