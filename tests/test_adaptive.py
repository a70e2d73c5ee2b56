"""The default for models reached over HTTP: adaptive concurrency, polite to a quota, every guarantee kept."""

from __future__ import annotations

import json

import pytest

from pytest_agentic.run.calls import limiter
from pytest_agentic.run.task import Final

from . import browser
from .fault_server import FaultServer
from .helpers import campaign_dir, runs
from .test_concurrency import say_ok_project
from .test_reliability import KILLER_TASK

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])


def manifest(pytester):
    return json.loads((campaign_dir(pytester.path / "out") / "campaign.json").read_text())


@pytest.fixture
def quota():
    """A provider that holds 4 calls in flight (0.3 s each) and answers any other with 429, Retry-After 0.2 s."""
    with FaultServer({"Say ok.": [Final("ok")]}, latency_s=0.3, quota=4, retry_after="0.2") as server:
        yield server


@XDIST
def test_with_no_flag_runs_of_an_http_model_go_many_at_once_and_the_limit_grows(pytester, xdist):
    with FaultServer({"Say ok.": [Final("ok")]}, latency_s=0.3) as server:
        say_ok_project(pytester, server)
        result = pytester.runpytest_subprocess("--runs", "48", "--agentic-out", "out", *xdist)
    result.assert_outcomes(passed=48)
    assert server.calls == 48
    pacing = manifest(pytester)["pacing"]["local"]
    assert (pacing["mode"], pacing["start"], pacing["cap"]) == ("adaptive", limiter.START, limiter.CAP)
    assert pacing["calls"] == 48 and pacing["rate_limited"] == 0
    workers = {e["worker"] for e in pacing["events"]}
    assert workers == ({"gw0", "gw1"} if xdist else {None})
    if xdist:  # a worker runs ahead only among the items xdist has sent it
        assert 2 < server.peak <= 2 * limiter.CAP
        return
    assert limiter.START < server.peak <= limiter.CAP
    grew = [e for e in pacing["events"] if e["why"] == "slow start"]
    assert grew and grew[0]["old"] == limiter.START and grew[0]["new"] == 2 * limiter.START
    assert manifest(pytester)["concurrency"] is None


@XDIST
def test_a_quota_is_found_and_no_run_is_lost(pytester, quota, xdist):
    say_ok_project(pytester, quota)  # max_retries 0: a refusal spent as a fault would lose the run
    result = pytester.runpytest_subprocess("--runs", "40", "--agentic-out", "out", *xdist)
    result.assert_outcomes(passed=40)
    records = runs(campaign_dir(pytester.path / "out"))
    assert len(records) == 40 and all(r["passed"] for r in records)
    # Refusals are counted apart from faults, per run and per model.
    assert sum(r["tags"]["retries"] for r in records) == 0
    assert sum(r["tags"].get("rate_limited", 0) for r in records) == quota.rate_refused > 0
    pacing = manifest(pytester)["pacing"]["local"]
    assert pacing["rate_limited"] == quota.rate_refused
    cuts = [e for e in pacing["events"] if e["why"] == "rate limited"]
    assert cuts and all(e["new"] < e["old"] for e in cuts)
    assert all("RateLimitError 429, wait 0.2s asked" == e["detail"] for e in cuts)
    if not xdist:
        # Once adapted, the limit sits at the quota, probing one above it now and then.
        assert pacing["limit"]["main"] <= quota.quota + 1
        assert quota.rate_refused <= (limiter.START - quota.quota) + 10
    summary = (campaign_dir(pytester.path / "out") / "summary.md").read_text()
    assert "## Concurrency" in summary and "rate limited" in summary


def test_a_dead_quota_ends_as_infra_error_within_its_bound(pytester):
    with FaultServer({"Say ok.": [Final("ok")]}, quota=0, retry_after="0.2") as server:
        say_ok_project(pytester, server, limits={"max_retries": 0, "max_rate_limit_wait_s": 1})
        result = pytester.runpytest_subprocess("--runs", "3", "--agentic-out", "out")
    result.assert_outcomes(failed=3)
    records = runs(campaign_dir(pytester.path / "out"))
    assert [r["failure_mode"] for r in records] == ["infra_error"] * 3
    assert all("max_rate_limit_wait_s = 1s" in r["infra_cause"] for r in records)
    assert all(r["tags"]["rate_limited"] == 6 for r in records)  # five waits of 0.2 s, the sixth would pass 1 s


def test_exitfirst_stops_the_runs_ahead_by_default(pytester, quota, monkeypatch):
    monkeypatch.setenv("AGENTIC_TEST_FAIL_RUN", "2")
    say_ok_project(pytester, quota)
    result = pytester.runpytest_subprocess("--runs", "40", "--agentic-out", "out", "-x", "-p", "no:xdist")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    folder = campaign_dir(pytester.path / "out")
    assert [(r["run"], r["passed"]) for r in runs(folder)] == [(1, True), (2, False)]
    assert quota.calls < 40, "runs not yet started were cancelled"
    assert json.loads((folder / "campaign.json").read_text())["complete"] is False


def test_interrupt_and_resume_by_default(pytester, quota, monkeypatch):
    monkeypatch.setenv("AGENTIC_TEST_INTERRUPT", "1")
    say_ok_project(pytester, quota)
    result = pytester.runpytest_subprocess("--runs", "30", "--agentic-out", "out", "-p", "no:xdist")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    folder = campaign_dir(pytester.path / "out")
    assert sorted(r["run"] for r in runs(folder)) == [1, 2]
    monkeypatch.delenv("AGENTIC_TEST_INTERRUPT")
    resumed = pytester.runpytest_subprocess("--runs", "30", "--agentic-out", "out", "--agentic-resume", str(folder))
    resumed.assert_outcomes(passed=28)
    assert sorted(r["run"] for r in runs(folder)) == list(range(1, 31))
    assert json.loads((folder / "campaign.json").read_text())["complete"] is True


def test_budget_no_run_starts_once_spent_by_default(pytester, quota):
    # Every call costs $0.10; the runs started when the budget is spent (at most twice the limit) finish.
    say_ok_project(pytester, quota)
    result = pytester.runpytest_subprocess("--runs", "40", "--agentic-out", "out", "--agentic-budget", "0.35",
                                           "-p", "no:xdist")
    outcomes = result.parseoutcomes()
    records = runs(campaign_dir(pytester.path / "out"))
    # Started ahead: at most twice the highest limit reached (slow start may double it before the quota's
    # first refusal comes back, later on a loaded machine), and the few in the test loop's hands.
    highest = max(e["new"] for e in manifest(pytester)["pacing"]["local"]["events"])
    assert 4 <= len(records) <= 2 * highest + 3, (outcomes, highest)
    assert outcomes["passed"] == len(records) and outcomes["skipped"] == 40 - len(records)
    assert quota.calls == len(records)


def test_killed_worker_loses_no_finished_run_by_default(pytester, quota):
    say_ok_project(pytester, quota)
    pytester.makepyfile(test_say_ok=KILLER_TASK)
    result = pytester.runpytest_subprocess("-n", "2", "--runs", "5", "--agentic-out", "out")
    by_run = {r["run"]: r for r in runs(campaign_dir(pytester.path / "out"))}
    assert sorted(by_run) == [1, 2, 3, 4, 5]
    assert all(by_run[n]["passed"] for n in (1, 3, 4, 5))
    assert by_run[2]["failure_mode"] == "infra_error" and "crashed" in by_run[2]["infra_cause"]
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_the_report_charts_how_the_limit_moved(pytester, quota, chromium, tmp_path):
    say_ok_project(pytester, quota)
    pytester.runpytest_subprocess("--runs", "24", "--agentic-out", "out", "-p", "no:xdist").assert_outcomes(passed=24)
    folder = campaign_dir(pytester.path / "out")
    pacing = json.loads((folder / "campaign.json").read_text())["pacing"]["local"]
    dom = browser.parse(browser.dump_dom((folder / "report.html").as_uri(), tmp_path / "profile"))
    section = dom.by_id("concurrency")
    assert section is not None and section.with_class("chart")[0].tag == "svg"
    line = section.with_class("limit")[0]
    assert line.tag == "polyline" and len(line.attrs["points"].split()) >= 2 * len(pacing["events"]) - 1
    cuts = section.with_class("cut")
    assert len(cuts) == sum(1 for e in pacing["events"] if e["why"] == "rate limited") > 0
    row = [td.text for td in next(section.iter("tbody")).iter("td")]
    # Calls sent: every run's one call, and each refused one sent again.
    assert row[:6] == ["local", "adaptive", str(limiter.START), str(limiter.CAP), str(24 + quota.rate_refused),
                       str(quota.rate_refused)]
    nav = [a.attrs["href"] for a in next(dom.iter("nav")).iter("a")]
    assert "#concurrency" in nav
