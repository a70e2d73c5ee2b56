"""The leaderboard command: campaigns in, a ranked table out."""

from __future__ import annotations

import csv
import io
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
    assert [r["model"] for r in rows] == ["coder", "cheap", "nano"]
    coder, cheap, nano = rows
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
    write_campaign(root / "c-nano-old", scores({"task_01": 0}, model="nano"), finished_at="2026-05-21")
    assert leaderboard.main([str(root)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("| rank")
    assert "| 15/30 " in out and "19.7%-80.3%" in out and "$0.000560" in out
    assert "95% CI (task-clustered)" in out.splitlines()[0]
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
    assert [by[m]["frontier_tokens"] for m in ("coder", "cheap", "nano")] == ["True", "False", "False"]
    assert by["coder"]["reasoning_tokens"] == ""  # unknown, not 0
    assert leaderboard.main([str(root), "--sort", "tokens"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[2].split("|")[2].strip() == "coder"  # same tokens: the better pass rate first
    assert "| on, on " in out and "| unknown, dominated " in out
    assert "- nano is dominated by cheap, coder: coder passes 100.0% (vs 50.0%) at 110 tokens (vs 110 tokens)" in out
    assert "Not placed (spend unknown): cheap." in out
