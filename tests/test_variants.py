"""``variants:`` in models.yaml: settings swept in one campaign, compared pairwise, placed on the frontier.

The sweeps run through the real litellm path: the scripted provider (which "thinks" when asked,
``run/scripted.py``) and an OpenAI-compatible stand-in that reports reasoning and cached tokens and
plays a near-miss when thinking is off (``tests/economy_server.py``).
"""

from __future__ import annotations

import csv
import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from pytest_agentic.run.models import ModelsFileError, load_registry

from .economy_server import CACHED_TOKENS, REASONING_TOKENS, ReasoningServer, leaks
from .helpers import ROOT, campaign_dir, runs
from .test_tasks_proven import MODULES, load, task_of

TASKS = "task_07 or task_08 or task_09"
FAST = {"max_retries": 2, "retry_backoff_s": 0.01, "retry_backoff_cap_s": 0.05, "request_timeout_s": 20,
        "max_retry_wait_s": 30}


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_variants_become_models_with_readable_ids_and_merged_params(tmp_path):
    path = _write(tmp_path / "models.yaml", """
default: [nano]
models:
  nano:
    model: openai/nvidia/nemotron-nano
    params: {temperature: 0.6, extra_body: {chat_template_kwargs: {enable_thinking: true}, top_k: 20}}
    variants:
      reasoning=on: {}
      reasoning=off: {extra_body: {chat_template_kwargs: {enable_thinking: false}}}
      t=0: {temperature: 0.0}
  plain: {model: openai/plain}
""")
    registry = load_registry(path)
    ids = ["nano[reasoning=on]", "nano[reasoning=off]", "nano[t=0]"]
    assert [e.name for e in registry.select([])] == ids  # the default names the entry: every variant
    assert [e.name for e in registry.select(["nano"])] == ids
    assert [e.name for e in registry.select(["nano[reasoning=off]", "plain"])] == ["nano[reasoning=off]", "plain"]
    off = registry.entries["nano[reasoning=off]"]
    assert off.params == {"temperature": 0.6, "extra_body": {"chat_template_kwargs": {"enable_thinking": False},
                                                             "top_k": 20}}
    assert registry.entries["nano[t=0]"].params["temperature"] == 0.0
    assert off.variant_of == "nano" and off.variant == "reasoning=off"
    assert off.public()["variant_of"] == "nano"
    with pytest.raises(ModelsFileError, match=r"--model 'nano\[nope\]': no such entry.*variants: nano\[reasoning=on\]"):
        registry.select(["nano[nope]"])


@pytest.mark.parametrize("variants, needle", [
    ("[a, b]", "key 'variants' must be a mapping"),
    ("{}", "key 'variants' must be a mapping"),
    ("{'a[1]': {}}", "key 'variants': label 'a\\[1\\]' must be a short text without brackets"),
    ("{a: 3}", "key 'variants'.a: expected a mapping of call parameters, got int"),
    ("{a: {model: x}}", "key 'variants'.a: may not set \\['model'\\]"),
])
def test_bad_variants_are_named(tmp_path, variants, needle):
    path = _write(tmp_path / "models.yaml", f"models:\n  nano:\n    model: openai/x\n    variants: {variants}\n")
    with pytest.raises(ModelsFileError, match=rf"models.yaml: entry 'nano': {needle}"):
        load_registry(path)


@pytest.fixture
def project(pytester):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    return pytester


def _scripted_sweep(pytester):
    _write(pytester.path / "models.yaml", """
default: [sweep]
models:
  sweep:
    model: agentic-scripted/oracle
    price: {input_per_token: 0.000001, output_per_token: 0.000002}
    variants:
      thinking=off: {}
      thinking=high: {extra_body: {agentic_scripted_thinking: 300}}
""")


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_scripted_sweep_same_instances_within_noise_and_the_dearer_dominated(project, xdist):
    _scripted_sweep(project)
    result = project.runpytest_subprocess("tasks", "-m", TASKS, "--runs", "2", "--agentic-out", "out", *xdist)
    result.assert_outcomes(passed=12)
    folder = campaign_dir(project.path / "out")
    assert "[" not in folder.name  # the folder's name has no brackets for a shell to glob
    records = runs(folder)
    by = {}
    for r in records:
        by.setdefault((r["task"], r["run"]), {})[r["model"]] = r
    assert len(by) == 6
    for pair in by.values():  # both variants ran the same instance with the same seed
        off, high = pair["sweep[thinking=off]"], pair["sweep[thinking=high]"]
        assert (off["task_hash"], off["seed"]) == (high["task_hash"], high["seed"])
        assert off["reasoning_tokens"] is None and high["reasoning_tokens"] == 300 * high["turns"]
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    assert "## Variants compared (paired, same instances and seeds)" in summary
    assert "sweep[thinking=off] vs sweep[thinking=high]: 6/6 vs 6/6" in summary
    assert "the difference is within noise" in summary
    assert ("sweep[thinking=high] is dominated by sweep[thinking=off]: sweep[thinking=off] passes 100.0% (vs 100.0%)"
            in summary) and "the same pass rate for less" in summary
    manifest = json.loads((folder / "campaign.json").read_text())
    assert {m["name"]: m.get("variant") for m in manifest["models"]} == {
        "sweep[thinking=off]": "thinking=off", "sweep[thinking=high]": "thinking=high"}
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert html.count('class="frontier-ring"') == 2  # thinking=off is on both frontiers, ringed once each
    assert "sweep[thinking=high] (dominated)" in html


def test_one_variant_is_selected_by_its_id(project):
    _scripted_sweep(project)
    result = project.runpytest_subprocess("tasks", "-m", "task_09", "--model", "sweep[thinking=high]",
                                          "--agentic-out", "out")
    result.assert_outcomes(passed=3)
    assert {r["model"] for r in runs(campaign_dir(project.path / "out"))} == {"sweep[thinking=high]"}


def _instances():
    chosen = [m for m in MODULES if any(t in m.name for t in ("task_07", "task_08", "task_09"))]
    return [task_of(load(path)).build(0) for path in chosen]


def _standin_models(pytester, server, variants=True):
    entry = {"model": "openai/nemotron-standin", "api_base": server.api_base, "limits": FAST,
             "price": {"input_per_token": 0.000001, "output_per_token": 0.000004}}
    if variants:
        entry["variants"] = {"reasoning=on": {"extra_body": {"chat_template_kwargs": {"enable_thinking": True}}},
                             "reasoning=off": {"extra_body": {"chat_template_kwargs": {"enable_thinking": False}}}}
    import yaml

    _write(pytester.path / "models.yaml", yaml.safe_dump({"default": "nano", "models": {"nano": entry}}))


def test_http_sweep_reports_reasoning_and_cache_and_names_the_better_variant(project, tmp_path, monkeypatch):
    instances = _instances()
    on = {i.prompt: i.reference for i in instances}
    off = {i.prompt: i.near_misses[sorted(i.near_misses)[0]] for i in instances}
    step = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))  # as GitHub Actions sets it
    with ReasoningServer(on, off, leak=leaks(instances)) as server:
        _standin_models(project, server)
        result = project.runpytest_subprocess("tasks", "-m", TASKS, "--runs", "2", "--agentic-out", "out",
                                              "--junitxml", "junit.xml")
    result.assert_outcomes(passed=6, failed=6)
    folder = campaign_dir(project.path / "out")
    records = runs(folder)
    on_runs = [r for r in records if r["model"] == "nano[reasoning=on]"]
    off_runs = [r for r in records if r["model"] == "nano[reasoning=off]"]
    # The reasoning held the near-miss's wrong answer, line and all: the verdict did not read it.
    assert all(r["passed"] for r in on_runs) and not any(r["passed"] for r in off_runs)
    for r in on_runs:
        assert r["reasoning_tokens"] == REASONING_TOKENS * r["turns"]
        assert r["cached_prompt_tokens"] == CACHED_TOKENS * (r["turns"] - 1)
        assert r["tokens_per_turn_max"] >= r["tokens_per_turn_mean"] > 0 and r["turns_to_answer"] == r["turns"]
        transcript = json.loads((folder / r["transcript"]).read_text())
        assert all("reasoning_content" in m for m in transcript["messages"] if m["role"] == "assistant")
    assert all(r["reasoning_tokens"] == 0 for r in off_runs)  # reported as 0: known, not unknown
    # Reasoning is never sent back to the endpoint.
    assert not any("reasoning_content" in m for b in server.bodies for m in b["messages"])
    economy = {(r["model"], r["task"]): r for r in csv.DictReader((folder / "token_economy.csv").read_text().splitlines())}
    assert int(economy[("nano[reasoning=on]", "ALL")]["reasoning_tokens"]) == sum(r["reasoning_tokens"] for r in on_runs)
    assert economy[("nano[reasoning=off]", "ALL")]["tokens_per_pass"] == ""  # no pass: nothing per pass
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    assert "nano[reasoning=on] is better than nano[reasoning=off], beyond noise" in summary
    assert "Fisher's exact test on the pooled runs (3 paired tasks cannot reach p < 0.05): p = 0.00216" in summary
    assert "nano[reasoning=off] is dominated" not in summary  # fewer passes for fewer dollars: not dominated
    # The job summary of GitHub Actions holds the campaign's summary.
    assert step.read_text(encoding="utf-8").strip() == summary.strip()
    # JUnit: the token economy of each run as properties.
    props = {}
    for case in ET.parse(project.path / "junit.xml").getroot().iter("testcase"):
        p = {e.get("name"): e.get("value") for e in case.iter("property")}
        props[(p["agentic_model"], p["agentic_task"], p["agentic_run"])] = p
    p = props[("nano[reasoning=on]", "task_09", "1")]
    assert p["agentic_reasoning_tokens"] == str(REASONING_TOKENS * 2)
    assert props[("nano[reasoning=off]", "task_09", "1")]["agentic_turns_to_answer"].isdigit()
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert '<details class="reasoning">' in html and "Tempting reply" in html
    assert "nano[reasoning=on] is better than nano[reasoning=off], beyond noise" in html
