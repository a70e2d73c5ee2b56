"""report.html from stored campaigns: what it shows, that model text stays text, and agentic-report."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from html import unescape
from pathlib import Path

import pytest

from pytest_agentic.campaign import stored, tables
from pytest_agentic.report import cli, render, run_id
from pytest_agentic.report.transcript import MAX_TEXT, run_view, steps_of

from .helpers import ROOT
from .records import NANO_NOW, NANO_THEN, record, scores, write_campaign

HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="document.body.dataset.pwned=1">'


def transcript_of(rec, answer="done", calls=()):
    """A transcript as the agent loop writes it: messages, and the log of each tool call in order."""
    messages = [{"role": "system", "content": "You are a software agent."},
                {"role": "user", "content": f"Do {rec['task']}."}]
    logs = []
    for i, (name, args, result, extra) in enumerate(calls):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        logs.append({"turn": i + 1, "id": f"c{i}", "name": name, "raw_arguments": json.dumps(args),
                     "arguments": args, "result": result, "ok": extra.get("ok", True),
                     "hallucinated": extra.get("hallucinated"), "redundant": extra.get("redundant", False),
                     "duration_s": 0.01})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
    messages.append({"role": "assistant", "content": answer})
    return {"task": rec["task"], "model": rec["model"], "run": rec["run"], "messages": messages,
            "tool_calls": logs, "final_answer": answer, "passed": rec["passed"],
            "failure_mode": rec["failure_mode"], "reason": rec["reason"]}


def stored_campaign(folder: Path, records, answers=None, **manifest) -> Path:
    write_campaign(folder, records, complete=True, runs=3, seed=0, **manifest)
    for r in records:
        path = folder / r["transcript"]
        path.parent.mkdir(parents=True, exist_ok=True)
        answer = (answers or {}).get((r["task"], r["run"]), "the answer")
        calls = [("fs_read", {"path": "a.txt"}, "41", {})]
        path.write_text(json.dumps(transcript_of(r, answer, calls)))
    return folder


@pytest.fixture
def nano(tmp_path):
    records = scores(NANO_NOW, model="nano 3/30b", cost=0.0084 / 30)
    records[-1] = {**records[-1], "reason": HOSTILE}
    return stored_campaign(tmp_path / "c-nano", records, answers={("task_10", 3): HOSTILE})


def test_run_ids_are_safe_fragments():
    assert run_id("task_09", 2, "near-miss") == "task_09-run2-near-miss"
    assert run_id("task_09", 2, "openai/Qwen/Qwen3 Coder:30b") == "task_09-run2-openai-Qwen-Qwen3-Coder-30b"
    assert run_id("task_09", 2, "<x>", prefix="c2-") == "c2-task_09-run2-x"


def test_page_shows_the_campaign_tables_numbers(nano):
    html = render.page([render.Source(stored.load(nano))])
    overall = next(r for r in tables.pass_rate_by_task(stored.load(nano).records, 3) if r["task"] == "ALL")
    # The headline interval is the campaign's own (the ALL row of pass_rate_by_task).
    assert f"{100 * overall['ci95_low']:.1f}%–{100 * overall['ci95_high']:.1f}%" in html
    assert "<strong>15/30</strong>" in html and "0.50 0.63 0.70" in html  # score, pass@1..3
    assert "$0.008400" in html and "$0.000560" in html  # total cost and cost per pass
    # Every run is there, collapsed, with its id, and the charts link to runs.
    for r in stored.load(nano).records:
        rid = run_id(r["task"], r["run"], r["model"])
        assert f'<details class="run o-{r["failure_mode"] or "passed"}" id="{rid}"' in html
        assert f'href="#{rid}"' in html
    assert html.count("<svg class=\"chart\"") == 2  # per-task chart and failure modes; no cost chart for one model
    assert "dead" in html and "flaky" in html and "solid" in html


def test_model_text_is_escaped_and_the_page_requests_nothing(nano):
    html = render.page([render.Source(stored.load(nano))])
    assert HOSTILE not in html
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;&lt;img src=x onerror=" in html
    assert len(re.findall(r"<script\b", html)) == 1  # the page's own
    csp = unescape(re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1))
    assert csp.startswith("default-src 'none';") and "script-src 'sha256-" in csp and "unsafe" not in csp
    # No attribute that loads anything: every link is a fragment of this page. (Model text is escaped,
    # so every "<" left in the page opens one of its own tags.)
    tags = re.findall(r"<[a-zA-Z][^>]*>", html)
    assert not [t for t in tags if re.search(r"\s(src|srcset|action|formaction|poster|data|background)=", t)]
    assert {h[0] for t in tags for h in re.findall(r'\shref="([^"]*)"', t)} == {"#"}
    assert "url(" not in html and "@import" not in html


def test_long_text_is_cut_and_says_so(tmp_path):
    rec = record("task_03", 1, False)
    folder = stored_campaign(tmp_path / "c", [rec], answers={("task_03", 1): "x" * (MAX_TEXT + 5)})
    html = render.page([render.Source(stored.load(folder))])
    assert "… 5 more characters in the transcript file" in html


def test_transcript_steps_pair_calls_with_their_results():
    rec = record("task_08", 1, False, mode="tool_call_redundancy")
    t = transcript_of(rec, "gave it", [("fs_read", {"path": "a"}, "ERROR: no such file", {"ok": False}),
                                       ("fs_raed", {"path": "a"}, "ERROR: unknown tool", {"ok": False,
                                                                                          "hallucinated": "unknown tool 'fs_raed'"}),
                                       ("fs_read", {"path": "b"}, "B", {"redundant": True})])
    steps = steps_of(t)
    assert [s.kind for s in steps] == ["system", "user", "assistant", "assistant", "assistant", "assistant"]
    assert steps[-1].content.text == "gave it"  # steps_of keeps the answering turn; the run view shows it once
    calls = [c for s in steps for c in s.calls]
    assert [(c.name, c.ok, c.hallucinated, c.redundant, c.result.text) for c in calls] == [
        ("fs_read", False, None, False, "ERROR: no such file"),
        ("fs_raed", False, "unknown tool 'fs_raed'", False, "ERROR: unknown tool"),
        ("fs_read", True, None, True, "B")]
    assert json.loads(calls[0].arguments.text) == {"path": "a"}
    view = run_view(rec, t, "x")  # the answering turn is shown once, as the final answer
    assert view.steps[-1].calls and view.final_answer.text == "gave it"
    assert [k for k, _ in view.tags] == []  # stop_reason has its own line; zero counts are not shown
    assert steps[-1].content.text == "gave it"


def test_marks_in_a_page(tmp_path):
    rec = record("task_08", 1, False, mode="tool_call_hallucinated")
    folder = write_campaign(tmp_path / "c", [rec], complete=True)
    (folder / rec["transcript"]).parent.mkdir(parents=True)
    (folder / rec["transcript"]).write_text(json.dumps(transcript_of(rec, "x", [
        ("fs_raed", {"path": "a"}, "ERROR: unknown tool", {"ok": False, "hallucinated": "unknown tool 'fs_raed'"})])))
    html = render.page([render.Source(stored.load(folder))])
    assert '<span class="flag hallucinated">hallucinated: unknown tool &#39;fs_raed&#39;</span>' in html


def test_missing_transcript_is_said_not_hidden(tmp_path):
    folder = write_campaign(tmp_path / "c", [record("task_01", 1, True)], complete=False)
    html = render.page([render.Source(stored.load(folder))])
    assert "transcripts/m/task_01-run1.json: transcript missing or unreadable" in html
    assert "The transcript file is missing or unreadable." in html
    assert "INCOMPLETE" in html


def test_stored_verdicts_are_shown(tmp_path, nano):
    then = stored_campaign(tmp_path / "c-then", scores(NANO_THEN, model="nano 3/30b"))
    (nano / "predictions.yaml").write_text("predictions:\n  - {id: P1, claim: half, score: '>= 15/30'}\n"
                                           "  - {id: F1, task: task_09, score: '>= 1/3', falsifier: true}\n")
    manifest = json.loads((nano / "campaign.json").read_text())
    manifest["compared_with"] = {"campaign_id": "c-then", "path": str(then)}
    manifest["gates"] = {"passed": False, "exit_status": 6, "results": [
        {"gate": "min lower bound 40%", "passed": False, "detail": "nano 3/30b: lower bound 33.2% < 40%"}]}
    (nano / "campaign.json").write_text(json.dumps(manifest))
    html = render.page([render.Source(stored.load(nano))])
    assert "CI gates: FAILED (exit status 6)</h4>" in html and "lower bound 33.2% &lt; 40%" in html
    sentence = html[html.index("nano 3/30b: 10/30 then, 15/30 now (+5 passes)"):]
    assert "mean per-task change +16.7 points" in sentence and ": within noise" in sentence
    assert "1/1 predictions held; no falsifier triggered (of 1)" in html
    # The earlier folder gone: the recorded verdicts are shown, and the page says why.
    import shutil

    shutil.rmtree(then)
    manifest["compared_with"]["models"] = [{"model": "nano 3/30b", "then": "10/30", "now": "15/30",
                                            "p_value": 0.295, "verdict": "within noise"}]
    (nano / "campaign.json").write_text(json.dumps(manifest))
    html = render.page([render.Source(stored.load(nano))])
    assert "is not readable from here" in html and "10/30 then, 15/30 now: within noise" in html


def two_campaigns(tmp_path):
    root = tmp_path / "agentic-results"
    stored_campaign(root / "c-nano", scores(NANO_NOW, model="nano", cost=0.0084 / 30))
    stored_campaign(root / "c-coder", scores({f"task_{i:02d}": 3 for i in range(1, 11)}, model="coder",
                                             cost=0.001))
    return root


def test_agentic_report_on_two_campaigns_writes_one_comparative_page(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = two_campaigns(tmp_path)
    assert cli.main([str(root / "c-nano"), str(root / "c-coder")]) == 0
    out = capsys.readouterr().out
    page = tmp_path / cli.DEFAULT_PAGE
    assert f"wrote {page.name}" in out and "2 campaign(s)" in out
    html = page.read_text()
    assert '<section id="leaderboard">' in html and '<section id="frontier">' in html
    assert 'data-axis="usd"' in html and 'data-axis="tokens"' in html  # the frontier against $ and tokens
    board = html.split('<section id="leaderboard">')[1].split("</section>")[0]
    assert board.index(">c-coder</a>") < board.index(">c-nano</a>")  # ranked: 30/30 before 15/30
    assert "coder (c-coder)" in html and "nano (c-nano)" in html  # the charts' series
    # Runs of both campaigns, ids prefixed by the campaign's place on the page.
    assert 'id="c1-task_01-run1-nano"' in html and 'id="c2-task_01-run1-coder"' in html
    assert not (root / "c-nano" / "report.html").exists()


def test_agentic_report_one_campaign_each_and_errors(tmp_path, capsys):
    root = two_campaigns(tmp_path)
    assert cli.main([str(root / "c-nano")]) == 0
    assert (root / "c-nano" / "report.html").is_file() and not (root / "c-coder" / "report.html").exists()
    assert cli.main([str(root), "--each"]) == 0
    assert (root / "c-coder" / "report.html").is_file()
    assert 'id="task_01-run1-coder"' in (root / "c-coder" / "report.html").read_text()
    assert cli.main([str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err
    readme = tmp_path / "README.md"
    readme.write_text("# not a campaign\n")
    assert cli.main([str(readme)]) == 2  # a file is named as a file, not as a missing folder
    err = capsys.readouterr().err
    assert "not a campaign folder (a file" in err and "no such folder" not in err
    with pytest.raises(SystemExit):
        cli.main([str(root), "--each", "-o", "x.html"])


def test_console_script_and_module(tmp_path):
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["agentic-report"] == "pytest_agentic.report.cli:main"
    root = two_campaigns(tmp_path)
    done = subprocess.run([sys.executable, "-m", "pytest_agentic.report", str(root / "c-nano")],
                          capture_output=True, text=True, check=True)
    assert "report.html" in done.stdout and (root / "c-nano" / "report.html").is_file()


def test_templates_and_assets_ship_as_package_data():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["pytest_agentic.report"]
    package = ROOT / "pytest_agentic" / "report"
    shipped = {p for pattern in patterns for p in package.glob(pattern)}
    files = {p for p in (package / "templates").iterdir()} | {p for p in (package / "static").iterdir()}
    assert files and files <= shipped


def test_the_concurrency_chart_spans_the_whole_session():
    """A limit that settled 12 s into a 344 s session held until its end: the chart runs to 344 s."""
    from pytest_agentic.report import charts

    events = [{"t": 0.0, "worker": None, "old": 0, "new": 8, "why": "start", "detail": ""},
              {"t": 12.0, "worker": None, "old": 8, "new": 16, "why": "slow start", "detail": ""}]
    chart = charts.pacing_chart({"m": {"events": events, "until_s": 344.0}})
    assert chart is not None and chart.xticks[-1][1] == "344 s"
    px, _, pw, _ = chart.plot
    assert chart.lines[0]["points"].split()[-1].startswith(f"{px + pw:.1f},")  # the last level drawn to the end
    older = charts.pacing_chart({"m": {"events": events}})  # a folder written before until_s: past the last change
    assert older is not None and older.xticks[-1][1] == "13 s"


def test_pacing_records_the_session_until_its_end():
    from pytest_agentic.campaign.pacing import PacingLog

    log = PacingLog(started=0.0)
    log.add({"worker": None, "models": {"m": {"mode": "adaptive", "events": [{"t": 1.0, "old": 0, "new": 8,
                                                                                 "why": "start"}]}}})
    assert log.as_dict()["m"]["until_s"] > 1.0


def test_one_model_page_shows_its_spend_without_a_frontier(nano):
    """With one model there is nothing to compare: no frontier heading, sentences or chart; the spend stays."""
    html = render.page([render.Source(stored.load(nano))])
    section = html.split('<section id="frontier">')[1].split("</section>")[0]
    assert "<h2>What the runs spent</h2>" in section and "frontier is drawn" in section
    assert "the frontier</h2>" not in section and "fewer than two" not in section
    assert "<li>Against" not in section  # no frontier sentence
    assert "tokens/pass (95% CI)" in section  # the economy table stays
    from pytest_agentic.campaign.summary import summary_markdown

    text = summary_markdown(stored.load(nano).records, campaign_id="c", seed=0, runs=3, complete=True,
                            started_at="s", finished_at="f", notes=[])
    assert "## Token economy" in text and "## Frontier" not in text


def test_quick_fails_are_defined_on_the_page(nano):
    html = render.page([render.Source(stored.load(nano))])
    overview = html.split("<h2>Overview</h2>")[1].split("</section>")[0]
    assert 'title="runs that gave their final answer without a single tool call, passed or not">quick fails' in overview
    assert "Quick fails: runs that gave their final answer without a single tool call" in overview
