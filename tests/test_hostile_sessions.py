"""Whole pytest sessions against hostile endpoints: modes, bounded time, and clean artefacts.

Each model of the session is one behaviour of ``tests/hostile_server.py`` (its own ``api_base``),
so a run's behaviour does not depend on the order xdist gives the runs.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from .helpers import campaign_dir, runs
from .hostile_server import HostileServer

TASK = '''
from pytest_agentic import Final, TaskInstance, task

def build(seed):
    return TaskInstance(prompt="Say ok.", files={"a.txt": "a"}, tools=("fs_list", "fs_read", "fs_write"),
                        reference=[Final("ok")])

@task("hostile_1", "hostile", build=build)
def test_hostile(agent):
    run = agent.run()
    assert run.final_answer == "ok"
'''

#: model name -> (behaviour, how many calls get it, the run's expected failure mode or None for a pass)
MODELS = {
    "content-ansi": ("content_ansi", 1, "wrong_answer"),
    "content-surrogate": ("content_surrogate", 1, "wrong_answer"),
    "content-nul": ("content_nul", 1, "wrong_answer"),
    "content-markup": ("content_markup", 1, "wrong_answer"),
    "content-fake-pass": ("content_fake_pass", 1, "wrong_answer"),
    "name-ansi": ("name_ansi", 99, "tool_call_hallucinated"),  # until max_turns
    "args-huge": ("args_huge", 1, None),  # then "ok": passed, the bad call tagged
    "path-traversal": ("path_traversal", 1, None),
    "usage-absurd": ("usage_absurd", 1, None),
    "not-json-once": ("not_json", 1, None),
    "error-200": ("error_200", 99, "infra_error"),
    "drip": ("drip", 99, "infra_error"),
    "auth": ("401", 99, "infra_error"),
    "down": ("500", 99, "infra_error"),
}
LIMITS = {"max_retries": 1, "retry_backoff_s": 0.01, "retry_backoff_cap_s": 0.02, "max_retry_wait_s": 5,
          "request_timeout_s": 8, "max_turns": 3}


def write_models(pytester, server, models, price=0.0):
    entries = {}
    for name, (behaviour, times, _) in models.items():
        limits = {**LIMITS, "request_timeout_s": 0.5} if behaviour == "drip" else LIMITS
        entries[name] = {"model": "openai/hostile", "api_base": server.base_for(behaviour, times), "limits": limits,
                         "price": {"input_per_token": "PRICE", "output_per_token": "PRICE"}}
    text = json.dumps({"default": next(iter(models)), "models": entries}).replace('"PRICE"', f"{price:f}")
    (pytester.path / "models.yaml").write_text(text)
    pytester.makepyfile(test_hostile_task=TASK)


def assert_clean(text: str, where: str) -> None:
    for bad in ("\x1b", "\x00", "\x07"):
        assert bad not in text, f"{bad!r} reached {where}"
    text.encode("utf-8")  # no lone surrogate


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_campaign_against_hostile_endpoints(pytester, xdist):
    with HostileServer() as server:
        write_models(pytester, server, MODELS)
        # A liveness guard, not a speed figure: a session that waits on the drip for ever fails here.
        result = pytester.runpytest_subprocess("--model", "all", "--runs", "1", "--agentic-out", "out", "--junitxml", "junit.xml",
                                               "-p", "no:cacheprovider", *xdist, timeout=600)
    folder = campaign_dir(pytester.path / "out")
    records = {r["model"]: r for r in runs(folder)}
    assert sorted(records) == sorted(MODELS), "every run is recorded"
    assert {m: records[m]["failure_mode"] for m in MODELS} == {m: v[2] for m, v in MODELS.items()}
    assert records["usage-absurd"]["prompt_tokens"] == 0 and records["usage-absurd"]["tags"]["usage_invalid"] == 1
    assert records["not-json-once"]["tags"]["retries"] == 1
    assert records["args-huge"]["tags"]["hallucinated_calls"] == 1
    assert records["auth"]["tags"]["retries"] == 0 and records["down"]["tags"]["retries"] == 1
    # The drip gives up after its request timeout and one retry: infra_error, never a wait without end.
    assert records["drip"]["failure_mode"] == "infra_error" and records["drip"]["tags"]["retries"] == 1

    output = result.stdout.str() + result.stderr.str()
    assert_clean(output, "the terminal")
    # A failed run's block quotes the answer with its escapes removed; the checker's reason may
    # quote it as a repr, escapes written out (pytest's full report, --agentic-tb=full, likewise).
    assert "final answer: " in output and "\\x1b[2J" in output
    assert "refuses the credentials" in output and "looks down" in output
    for path in [folder / "summary.md", folder / "report.html", folder / "cross_task_consistency.md",
                 pytester.path / "junit.xml"]:
        assert_clean(path.read_text(encoding="utf-8"), path.name)
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    ET.parse(pytester.path / "junit.xml")
    for transcript in (folder / "transcripts").rglob("*.json"):
        json.loads(transcript.read_text(encoding="utf-8"))
        assert transcript.stat().st_size < 4 << 20, f"{transcript} is not bounded"


def test_the_budget_takes_no_refund_from_negative_usage(pytester):
    models = {"neg": ("usage_negative", 1, None)}
    with HostileServer() as server:
        write_models(pytester, server, models, price=0.001)  # 110 tokens a clean call: $0.11
        # One run at a time: which runs start is then exact (runs in flight all finish, see test_concurrency).
        result = pytester.runpytest_subprocess("--runs", "5", "--agentic-out", "out", "--agentic-budget", "0.25",
                                               "-p", "no:xdist", "-p", "no:cacheprovider", "--agentic-concurrency", "1")
    # Run 1's usage (-5007 tokens) is not counted (cost unknown), runs 2-4 spend $0.33: run 5 is skipped.
    result.assert_outcomes(passed=4, skipped=1)
    records = runs(campaign_dir(pytester.path / "out"))
    assert records[0]["cost_usd"] is None and records[0]["tags"]["usage_invalid"] == 1
    assert all(r["cost_usd"] is None or r["cost_usd"] >= 0 for r in records)
