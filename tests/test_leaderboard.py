"""The leaderboard command: campaigns in, a ranked table out."""

from __future__ import annotations

import csv
import io
import re
import statistics
import subprocess
import sys
import tomllib

from pytest_agentic.verdicts import leaderboard

from .helpers import ROOT
from .records import NANO_NOW, record, scores, write_campaign


def campaigns(tmp_path):
    root = tmp_path / "agentic-results"
    write_campaign(root / "c-nano", scores(NANO_NOW, model="nano", cost=0.0084 / 30), finished_at="2026-05-25")
    coder = scores({f"task_{i:02d}": 3 for i in range(1, 11)}, model="coder", cost=0.001)
    coder[0] = record("task_01", 1, False, model="coder", mode="infra_error", cost=0.001)
    write_campaign(root / "c-coder", coder, finished_at="2026-05-26")
    write_campaign(root / "c-cheap", scores({"task_01": 3, "task_02": 2}, model="cheap", cost=None),
                   finished_at="2026-05-27")
    return root


def test_csv_ranks_by_pass_rate_with_interval_and_cost(tmp_path, capsys):
    assert leaderboard.main([str(campaigns(tmp_path)), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    # The two-task campaign is ranked apart from the ten-task ones (like with like), after them.
    assert [(r["model"], r["group"], r["rank"]) for r in rows] == [("coder", "1", "1"), ("nano", "1", "2"),
                                                                   ("cheap", "2", "1")]
    coder, nano, cheap = rows
    assert (cheap["task_set"], cheap["runs"], nano["runs"]) == ("task_01 task_02", "6", "30")
    assert (coder["passed"], coder["judged"], coder["infra_errors"]) == ("29", "29", "1")
    assert (nano["passed"], nano["judged"], nano["pass_rate"]) == ("15", "30", "0.5")
    # The interval is clustered by task (the Nano's per-task rates: sd 0.4231 over 10 tasks, t 9 df);
    # Wilson over the 30 runs as if independent would be 0.3315-0.6685.
    half = 2.262157 * statistics.stdev([v / 3 for v in NANO_NOW.values()]) / 10 ** 0.5
    assert float(nano["ci95_low"]) == round(0.5 - half, 4) == 0.1973
    assert float(nano["ci95_high"]) == round(0.5 + half, 4) == 0.8027
    assert (nano["ci95_method"], nano["tasks"]) == ("task-clustered t, 9 df", "10")
    assert float(nano["total_cost_usd"]) == 0.0084 and float(nano["cost_per_pass_usd"]) == 0.00056
    assert cheap["total_cost_usd"] == "" and cheap["cost_per_pass_usd"] == ""


def test_markdown_table_and_latest(tmp_path, capsys):
    root = campaigns(tmp_path)
    write_campaign(root / "c-nano-old", scores(dict.fromkeys(NANO_NOW, 0), model="nano"), finished_at="2026-05-21")
    assert leaderboard.main([str(root)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("Campaigns over different task sets or benchmark revisions are ranked apart")
    assert next(line for line in out.splitlines() if line.startswith("|")).startswith("| rank")
    assert "| 15/30 " in out and "19.7%-80.3%" in out and "$0.000560" in out
    assert "95% CI (task-clustered)" in next(line for line in out.splitlines() if line.startswith("|"))
    assert out.count("| nano ") == 2
    assert leaderboard.main([str(root), "--latest"]) == 0
    assert capsys.readouterr().out.count("| nano ") == 1


def test_errors_and_the_console_script(tmp_path):
    assert leaderboard.main([str(tmp_path / "missing")]) == 2
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["agentic-leaderboard"] == "pytest_agentic.verdicts.leaderboard:main"
    done = subprocess.run([sys.executable, "-m", "pytest_agentic.verdicts.leaderboard", str(campaigns(tmp_path)),
                           "--format", "md"], capture_output=True, text=True, check=True)
    assert "| coder " in done.stdout


def test_frontier_columns_and_sort_by_spend(tmp_path, capsys):
    """Records written before the token economy read as they are: tokens counted, reasoning unknown."""
    root = campaigns(tmp_path)
    assert leaderboard.main([str(root), "--format", "csv", "--sort", "usd"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["model"] for r in rows] == ["nano", "coder", "cheap"]  # cheapest per task first, unknown last
    by = {r["model"]: r for r in rows}
    assert float(by["nano"]["usd_per_task"]) == 0.00028 and by["cheap"]["usd_per_task"] == ""
    assert (by["nano"]["frontier_usd"], by["coder"]["frontier_usd"], by["cheap"]["frontier_usd"]) == ("True", "True", "")
    # Every run spent 110 tokens: the coder passes most for as many, and dominates the others on tokens.
    assert by["coder"]["tokens_per_task"] == "110.0"
    assert [by[m]["frontier_tokens"] for m in ("coder", "nano")] == ["True", "False"]
    assert by["cheap"]["frontier_tokens"] == ""  # alone in its group (two tasks): no frontier drawn
    assert by["coder"]["reasoning_tokens"] == ""  # unknown, not 0
    assert leaderboard.main([str(root), "--sort", "tokens"]) == 0
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.startswith("|")]
    assert table[2].split("|")[2].strip() == "coder"  # same tokens: the better pass rate first
    assert "| on, on " in out and "| on, dominated " in out and "| unknown, - " in out
    assert "- nano is dominated by coder: coder passes 100.0% (vs 50.0%) at 110 tokens (vs 110 tokens)" in out
    cheap_group = out.split("\nOver task_01, task_02 (2 tasks)")[1]
    assert "- Against" not in cheap_group  # one model alone in its group: nothing to compare, no frontier sentence


def test_like_with_like_campaigns_over_other_task_sets_are_ranked_apart_with_their_coverage(tmp_path, capsys):
    root = tmp_path / "results"
    # The cases of issue 34: a full campaign at 30/30 and a one-task one at 3/3 (cheaper per pass); a 4-task
    # campaign that spends more per task than a 1-task one.
    full = dict.fromkeys(NANO_NOW, 3)
    write_campaign(root / "full", scores(full, model="big", cost=0.002), benchmark_revision=4)
    write_campaign(root / "one", scores({"task_09": 3}, model="small", cost=0.0001), benchmark_revision=4)
    write_campaign(root / "four", scores({"task_01": 2, "task_02": 1, "task_03": 1, "task_09": 0}, model="mid",
                                         cost=0.01), benchmark_revision=4)
    write_campaign(root / "one-b", scores({"task_09": 1}, model="tiny", cost=0.00001), benchmark_revision=4)
    assert leaderboard.main([str(root), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["model"], r["group"], r["rank"]) for r in rows] == [
        ("big", "1", "1"), ("mid", "2", "1"), ("small", "3", "1"), ("tiny", "3", "2")]
    by = {r["model"]: r for r in rows}
    # Alone in its group, the 4-task campaign is dominated by nothing (it was by the 1-task one, on tokens per task).
    assert (by["mid"]["frontier_usd"], by["mid"]["frontier_tokens"]) == ("", "")
    assert (by["tiny"]["frontier_usd"], by["small"]["frontier_usd"]) == ("True", "True")

    assert leaderboard.main([str(root)]) == 0
    out = capsys.readouterr().out
    assert "ranked apart" in out.splitlines()[0]
    titles = [line for line in out.splitlines() if line.startswith("Over ")]
    assert titles == [f"Over {', '.join(full)} (10 tasks), benchmark revision 4:",
                      "Over task_01, task_02, task_03, task_09 (4 tasks), benchmark revision 4:",
                      "Over task_09 (1 task), benchmark revision 4:"]
    tables = [[line for line in block.splitlines() if line.startswith("|")] for block in out.split("\nOver ")[1:]]
    header = [c.strip() for c in tables[0][0].strip("|").split("|")]
    assert header[:5] == ["rank", "model", "campaign", "revision", "coverage"]
    cells = {line.split("|")[2].strip(): [c.strip() for c in line.strip("|").split("|")] for t in tables for line in t[2:]}
    assert cells["big"][4] == "10 tasks, 30 runs" and cells["mid"][4] == "4 tasks, 12 runs"
    assert cells["small"][4] == "1 task, 3 runs" and (cells["big"][0], cells["small"][0], cells["tiny"][0]) == ("1", "1", "2")
    # Each group's frontier is said under its own table, and no sentence names a row of another group.
    for block, names in zip(out.split("\nOver ")[1:], [{"big"}, {"mid"}, {"small", "tiny"}]):
        said = {m for m in ("big", "mid", "small", "tiny") if re.search(rf"\\b{m}\\b", block.split("|")[-1])}
        assert said <= names, (block, said)
    assert "mid is dominated" not in out and "big is dominated" not in out
