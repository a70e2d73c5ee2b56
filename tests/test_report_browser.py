"""A real session's report.html, rendered offline by headless Chromium; and pytest-html's rows linking to it.

Two scripted models: ``oracle`` answers right, ``near-miss`` answers with HTML and script (and sends
markup as a tool argument). The page must show that text as text, run none of it and fetch nothing.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from . import browser
from .helpers import ROOT, campaign_dir

TASK = '''
import os

from pytest_agentic import Final, TaskInstance, ToolCall, task

SENTINEL = os.environ["AGENTIC_SENTINEL"]
HOSTILE = ("<script>document.title='pwned'</script>"
           f"<img src=\\"{SENTINEL}/answer.png\\" onerror=\\"document.body.setAttribute('data-pwned','yes')\\">")


def build(seed):
    return TaskInstance(
        prompt="What is in answer.txt?", files={"answer.txt": "41"}, tools=("fs_read",),
        reference=[ToolCall("fs_read", {"path": "answer.txt"}), Final("The answer is 41.")],
        near_misses={"hostile": [ToolCall("fs_read", {"path": f"<img src='{SENTINEL}/arg.png'>"}),
                                 Final(HOSTILE)]},
    )


@task("task_42", "read_answer", build=build)
def test_read_answer(agent):
    run = agent.run()
    # Not a bare "41": the hostile answer holds the sentinel's URL, whose random port may contain it.
    assert "answer is 41" in run.final_answer
'''

HOSTILE_TEMPLATE = ("<script>document.title='pwned'</script>"
                    "<img src=\"{sentinel}/answer.png\" onerror=\"document.body.setAttribute('data-pwned','yes')\">")


class Sentinel(BaseHTTPRequestHandler):
    """Records every request: the page must make none."""

    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        Sentinel.seen.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture
def sentinel():
    Sentinel.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sentinel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def campaign(pytester, sentinel, monkeypatch):
    """A real session: tasks 07 and 09 and the hostile task, oracle and near-miss, 2 runs, with --html."""
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "models.yaml", pytester.path / "models.yaml")
    (pytester.path / "tasks" / "test_task_42_read_answer.py").write_text(TASK)
    monkeypatch.setenv("AGENTIC_SENTINEL", sentinel)
    result = pytester.runpytest_subprocess(
        "tasks", "--strict-markers", "-p", "no:randomly", "-m", "task_07 or task_09 or task_42",
        "--model", "oracle", "--model", "near-miss", "--runs", "2", "--agentic-out", "out",
        "--html", "html/index.html")
    result.assert_outcomes(passed=6, failed=6)
    folder = campaign_dir(pytester.path / "out")
    result.stdout.fnmatch_lines([f"report: {(folder / 'report.html').resolve().as_uri()}"])
    return folder


def test_pytest_html_rows_carry_mode_tags_and_a_link_to_the_transcript(campaign):
    page = (campaign.parent.parent / "html" / "index.html").read_text(encoding="utf-8")
    blob = json.loads(html.unescape(re.search(r'data-jsonblob="([^"]*)"', page).group(1)))
    rows = {test_id: entries for test_id, entries in blob["tests"].items()}
    row = next(e for k, v in rows.items() if "test_read_answer[near-miss-run1]" in k for e in v
               if "resultsTableRow" in e and "Failed" in e["resultsTableRow"][0])["resultsTableRow"]
    link = "../out/" + urllib.parse.quote(campaign.name) + "/report.html#task_42-run1-near-miss"
    assert row[-3:] == [
        '<td class="col-agentic">wrong_answer</td>',
        '<td class="col-agentic">stop_reason=final_answer, tool_errors=1</td>',
        f'<td class="col-agentic"><a href="{link}">task_42 run1 near-miss</a></td>']
    assert (campaign.parent.parent / "html" / urllib.parse.unquote(link.split("#")[0])).is_file()
    assert '<th class="col-agentic">agentic mode</th>' in page


def test_chromium_renders_the_report_offline_and_runs_no_model_text(chromium, campaign, sentinel, tmp_path):
    report = campaign / "report.html"
    chosen = "task_42-run2-near-miss"
    dom = browser.parse(browser.dump_dom(f"{report.as_uri()}#{chosen}", tmp_path / "profile"))
    doc = next(dom.iter("html"))
    # The page's own script ran (its hash is in the CSP), and nothing else did.
    assert next(doc.iter("title")).text == f"pytest-agentic report: {campaign.name}"
    body = next(doc.iter("body"))
    assert "data-pwned" not in body.attrs
    assert len(list(doc.iter("script"))) == 1
    assert not list(next(doc.iter("main")).iter("img")) and not list(doc.iter("iframe"))
    assert not [(n.tag, k) for n in doc.iter() for k in n.attrs if k.startswith("on")]
    assert "hidden" not in doc.with_class("toolbar")[0].attrs  # shown by the script
    # Charts present: pass rate per task (every run a link) and failure modes; beside them the frontier's
    # (tests/test_economy_browser.py reads those).
    charts = [c for c in doc.with_class("chart") if "frontier-chart" not in c.attrs["class"].split()]
    assert len(charts) == 2 and all(c.tag == "svg" for c in charts)
    assert [c.attrs["aria-labelledby"] for c in charts] == ["task-chart-title", "mode-chart-title"]
    marks = [a.attrs["href"] for a in charts[0].iter("a") if a.with_class("mark")]
    runs = [d for d in doc.iter("details") if "run" in d.attrs.get("class", "").split()]
    assert len(runs) == 12 and sorted(marks) == sorted(f"#{d.attrs['id']}" for d in runs)
    # The chosen run is opened by its link; its answer, tool call and checker verdict read as text.
    run = dom.by_id(chosen)
    assert "open" in run.attrs
    hostile = HOSTILE_TEMPLATE.format(sentinel=sentinel)
    answer = run.with_class("final")[0].with_class("answer")[0].text
    assert answer == hostile
    call = run.with_class("call")[0]
    assert call.with_class("fn")[0].text == "fs_read"
    assert f"<img src='{sentinel}/arg.png'>" in call.with_class("args")[0].text
    assert call.with_class("result")[0].text.startswith("ERROR:")
    reason = run.with_class("reason")[0].text  # the checker's message quotes the answer (repr)
    assert "<script>document.title=" in reason and "onerror=" in reason
    oracle = dom.by_id("task_42-run1-oracle")
    assert "open" not in oracle.attrs  # collapsed by default
    assert oracle.with_class("answer")[0].text == "The answer is 41."
    assert [c.with_class("result")[0].text for c in oracle.with_class("call")] == ["41"]
    # Nothing was fetched: not the answer's image, not the argument's.
    shot = browser.screenshot(report.as_uri(), tmp_path / "report.png", tmp_path / "profile", size="1200,1000")
    assert shot.stat().st_size > 10_000
    assert Sentinel.seen == []
    if os.environ.get("AGENTIC_REGENERATE_SCREENSHOT"):
        (ROOT / "docs").mkdir(exist_ok=True)
        shutil.copyfile(shot, ROOT / "docs" / "report.png")


MEASURE = """<script>
addEventListener("load", () => {
  const table = document.querySelector("table.headline"), box = table.parentElement;
  const cost = [...table.querySelectorAll("th")].find(th => th.textContent === "total cost");
  document.body.setAttribute("data-overflow", String(box.scrollWidth - box.clientWidth));
  document.body.setAttribute("data-cost-right", String(Math.round(cost.getBoundingClientRect().right)));
  document.body.setAttribute("data-viewport", String(innerWidth));
});
</script>"""


def test_the_overview_fits_a_laptop_width_with_its_cost_in_view(chromium, tmp_path):
    """At 1400 px the overview table of a 10-run campaign with long model names scrolls nowhere, cost shown."""
    from pytest_agentic.report import cli

    from .records import scores, write_campaign

    root = tmp_path / "agentic-results"
    for name in ("qwen3-coder-30b-a3b-instruct-fp8-novita", "nemotron-nano-3-30b-a3b-bf16-vllm"):
        write_campaign(root / name, scores({f"task_{i:02d}": i % 11 for i in range(1, 11)}, runs=10, model=name,
                                           cost=0.00123), complete=True, runs=10, seed=0)
    page = tmp_path / "both.html"
    assert cli.main([str(root), "-o", str(page)]) == 0
    html = page.read_text()
    # The measuring script is the test's own: the page's CSP (its own script's hash) is dropped in this copy.
    measured = tmp_path / "measured.html"
    measured.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
                        .replace("</body>", MEASURE + "</body>"))
    done = browser.subprocess.run([*browser._command(tmp_path / "profile"), "--window-size=1400,900",
                                   "--dump-dom", measured.as_uri()], capture_output=True, text=True, timeout=120)
    body = next(browser.parse(done.stdout).iter("body"))
    assert body.attrs["data-viewport"] == "1400"
    assert int(body.attrs["data-overflow"]) <= 0, "the overview table scrolls sideways at 1400 px"
    assert int(body.attrs["data-cost-right"]) <= 1400, "the total cost column is out of view"
