"""The token economy of a run, and reasoning kept but never judged, through litellm and a stand-in endpoint.

OpenAI-style endpoints (vLLM, llama.cpp, DeepSeek) send ``reasoning_content`` and usage details;
Anthropic (and Bedrock's Claude) send thinking blocks and ``cache_read_input_tokens``, which litellm
maps. Both are played by real HTTP servers on 127.0.0.1 and read through ``litellm.completion``.
"""

from __future__ import annotations

import json

import pytest

from pytest_agentic.campaign import economy, frontier
from pytest_agentic.campaign.writer import append_step_summary
from pytest_agentic.outcome import junit_properties
from pytest_agentic.run.agent import run_agent
from pytest_agentic.run.limits import Limits
from pytest_agentic.run.models import ModelEntry
from pytest_agentic.run.records import economy_of
from pytest_agentic.run.tools import Workspace, get_tools

from .economy_server import anthropic_reply
from .hostile_server import Reply, call, completion

ENTRY = ModelEntry(name="standin", model="openai/standin", price={"input_per_token": 0.000001,
                                                                  "output_per_token": 0.000002})
LIMITS = Limits(max_retries=1, retry_backoff_s=0.01, retry_backoff_cap_s=0.05, request_timeout_s=20,
                max_retry_wait_s=10, max_turns=4, max_seconds=120)
WRONG = "The average is 121.59.\nANSWER: 121.59"


def _run(tmp_path, script, entry=ENTRY, api_base=None):
    from .hostile_server import HostileServer

    with HostileServer(script, then="ok") as server:
        result = run_agent(entry=entry, api_base=api_base or server.api_base, prompt="List the files, then answer.",
                           system="", workspace=Workspace(tmp_path), tools=get_tools(["fs_list", "fs_read"]),
                           limits=LIMITS, metadata={})
        return result, server


def _reply(message, usage):
    return lambda body: Reply(body=completion(message, finish="tool_calls" if message.get("tool_calls") else "stop",
                                              usage=usage))


def test_openai_reasoning_and_usage_details_are_counted_kept_and_never_the_answer(tmp_path):
    script = [
        _reply({"role": "assistant", "content": None, "reasoning_content": "First I list.",
                "tool_calls": [call("fs_list", "{}")]},
               {"prompt_tokens": 100, "completion_tokens": 30, "total_tokens": 130,
                "completion_tokens_details": {"reasoning_tokens": 20}, "prompt_tokens_details": {"cached_tokens": 0}}),
        _reply({"role": "assistant", "content": "ANSWER: 7", "reasoning_content": f"Maybe\n{WRONG}"},
               {"prompt_tokens": 180, "completion_tokens": 50, "total_tokens": 230,
                "completion_tokens_details": {"reasoning_tokens": 45}, "prompt_tokens_details": {"cached_tokens": 96}}),
    ]
    result, server = _run(tmp_path, script)
    assert result.stop_reason == "final_answer"
    assert result.final_answer == "ANSWER: 7"  # the reasoning's answer line is not the answer
    assert (result.reasoning_tokens, result.cached_prompt_tokens) == (65, 96)
    assert result.turn_tokens == [130, 230]
    assistants = [m for m in result.messages if m["role"] == "assistant"]
    assert [m.get("reasoning_content") for m in assistants] == ["First I list.", f"Maybe\n{WRONG}"]
    # The reasoning is kept in the run, not sent back to the endpoint.
    second = server.bodies[1]["messages"]
    assert any(m["role"] == "assistant" for m in second)
    assert not any("reasoning_content" in m for m in second)
    fields = economy_of(result)
    assert fields["reasoning_tokens"] == 65 and fields["cached_prompt_tokens"] == 96
    assert fields["tokens_per_turn_mean"] == 180.0 and fields["tokens_per_turn_max"] == 230
    assert fields["turns_to_answer"] == 2 and fields["seconds_to_answer"] is not None
    assert 0 < fields["seconds_to_answer"] <= result.latency_s


def test_an_endpoint_reporting_no_details_gives_unknown_not_zero(tmp_path):
    result, _ = _run(tmp_path, [])  # "ok" with plain usage
    assert result.final_answer == "ok"
    assert result.reasoning_tokens is None and result.cached_prompt_tokens is None
    record = {"task": "t", "model": "m", "run": 1, "passed": True, "failure_mode": None, "tags": {},
              "prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.0, "tool_calls": 0, **economy_of(result)}
    props = dict(junit_properties(record))  # type: ignore[arg-type]
    assert props["agentic_reasoning_tokens"] == "unknown"
    assert props["agentic_cached_prompt_tokens"] == "unknown"
    assert props["agentic_turns_to_answer"] == 1


def test_reported_zero_stays_zero(tmp_path):
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110,
             "completion_tokens_details": {"reasoning_tokens": 0}, "prompt_tokens_details": {"cached_tokens": 0}}
    result, _ = _run(tmp_path, [_reply({"role": "assistant", "content": "ok"}, usage)])
    assert (result.reasoning_tokens, result.cached_prompt_tokens) == (0, 0)


def test_an_answer_only_in_the_reasoning_is_no_answer(tmp_path):
    result, _ = _run(tmp_path, [_reply({"role": "assistant", "content": "", "reasoning_content": WRONG},
                                       {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})])
    assert result.stop_reason == "empty_final"
    assert result.final_answer is None
    assert economy_of(result)["turns_to_answer"] is None


def test_anthropic_thinking_blocks_are_kept_sent_back_and_cached_tokens_mapped(tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_ANTHROPIC_KEY", "sk-ant-standin")
    entry = ModelEntry(name="claude", model="anthropic/claude-sonnet-4-5", api_key_env="STANDIN_ANTHROPIC_KEY",
                       params={"max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}},
                       price={"input_per_token": 0.000003, "output_per_token": 0.000015})
    script = [
        lambda body: Reply(body=anthropic_reply(thinking="I should list the files first.", signature="sig-one",
                                                tool=("fs_list", {}), cached=0)),
        lambda body: Reply(body=anthropic_reply(thinking=f"Or perhaps:\n{WRONG}", signature="sig-two",
                                                text="ANSWER: 7", cached=90)),
    ]
    from .hostile_server import HostileServer

    with HostileServer(script, then="ok") as server:
        base = f"http://127.0.0.1:{server.httpd.server_address[1]}"
        result = run_agent(entry=entry, api_base=base, prompt="List the files, then answer.", system="",
                           workspace=Workspace(tmp_path), tools=get_tools(["fs_list"]), limits=LIMITS, metadata={})
    assert result.stop_reason == "final_answer", (result.stop_reason, result.infra_error)
    assert result.final_answer == "ANSWER: 7"
    assistants = [m for m in result.messages if m["role"] == "assistant"]
    assert assistants[0]["thinking_blocks"][0]["signature"] == "sig-one"
    assert "I should list the files first." in assistants[0]["reasoning_content"]
    assert WRONG in assistants[1]["reasoning_content"]
    assert result.cached_prompt_tokens == 90  # Anthropic's cache_read_input_tokens, as litellm maps it
    # The second request carries the first turn's signed thinking block back, as Anthropic requires.
    sent = [m for m in server.bodies[1]["messages"] if m["role"] == "assistant"]
    blocks = [b for m in sent for b in (m["content"] if isinstance(m["content"], list) else [])]
    assert {"type": "thinking", "thinking": "I should list the files first.", "signature": "sig-one"} in \
        [{k: b.get(k) for k in ("type", "thinking", "signature")} for b in blocks]


def _rec(model, task, run, passed, cost, tokens, **economy_fields):
    return {"model": model, "task": task, "task_name": task, "run": run, "passed": passed,
            "failure_mode": None if passed else "wrong_answer", "tags": {}, "prompt_tokens": tokens - 10,
            "completion_tokens": 10, "cost_usd": cost, "latency_s": 2.0, "tool_calls": 1, "turns": 2,
            **economy_fields}


def test_economy_per_pass_with_interval_and_unknown_when_unreported():
    records = [_rec("a", f"t{t}", r, passed=(r == 1), cost=0.01, tokens=1000, reasoning_tokens=100,
                    cached_prompt_tokens=None, tokens_per_turn_mean=500.0, tokens_per_turn_max=700,
                    turns_to_answer=2, seconds_to_answer=1.5) for t in range(3) for r in (1, 2)]
    records += [_rec("old", "t0", r, passed=True, cost=None, tokens=100) for r in (1, 2)]  # written before
    rows = {(r["model"], r["task"]): r for r in economy.token_economy(records)}
    a = rows[("a", "ALL")]
    assert a["pass_rate"] == 0.5 and a["tokens_per_run"] == 1000 and a["tokens_per_pass"] == 2000
    assert a["usd_per_pass"] == pytest.approx(0.02) and a["seconds_per_pass"] == 4.0
    assert a["tokens_per_pass_ci95_low"] == pytest.approx(1000 / a["ci95_high"], rel=1e-3)
    assert a["tokens_per_pass_ci95_high"] == pytest.approx(1000 / a["ci95_low"], rel=1e-3)
    assert a["reasoning_tokens"] == 600 and a["cached_prompt_tokens"] is None
    assert a["tokens_per_turn_max"] == 700 and a["turns_to_answer_mean"] == 2
    old = rows[("old", "ALL")]
    assert old["reasoning_tokens"] is None and old["usd_per_pass"] is None and old["tokens_per_turn_mean"] is None
    shown = {r["model"]: r for r in economy.economy_rows(records, overall_only=True)}
    assert shown["old"]["reasoning tok"] == "unknown" and shown["old"]["$/pass (95% CI)"] == "unknown"
    assert shown["a"]["cached prompt tok"] == "unknown" and shown["a"]["reasoning tok"] == "600"


def test_frontier_marks_the_dominated_and_says_why():
    def model(name, passes, cost, tokens):
        return [_rec(name, f"t{t}", r, passed=(r <= passes), cost=cost, tokens=tokens) for t in range(4)
                for r in (1, 2, 3)]

    records = (model("cheap", 1, 0.001, 500) + model("strong", 3, 0.004, 3000) + model("waste", 2, 0.006, 4000)
               + model("twin", 3, 0.008, 3000) + model("free", 1, None, 200))
    pts = {p.model: p for p in frontier.points(records)}
    assert pts["cheap"].on["usd"] and pts["strong"].on["usd"]
    assert not pts["waste"].on["usd"] and pts["waste"].dominated_by["usd"] == ["strong"]  # twin costs more
    assert not pts["twin"].on["usd"] and pts["twin"].dominated_by["usd"] == ["strong"]
    assert pts["free"].on["usd"] is None and pts["free"].on["tokens"]  # unpriced: placed on tokens only
    words = " ".join(frontier.sentences(list(pts.values()), "usd"))
    assert "twin is dominated by strong" in words and "the same pass rate for less" in words
    assert "Not placed (spend unknown): free" in words
    # The cheap and the waste differ by 1 pass in 3 per task: their intervals overlap, said as such.
    both = frontier.points(model("cheap", 1, 0.001, 500) + model("waste", 2, 0.006, 4000))
    assert "may be noise" not in " ".join(frontier.sentences(both, "usd"))  # neither dominates: both on it
    assert all(p.on["usd"] for p in both)


def test_step_summary_is_appended_when_the_variable_names_a_file(tmp_path, monkeypatch):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "summary.md").write_text("# Campaign c\n\n## Frontier\n", encoding="utf-8")
    target = tmp_path / "step.md"
    target.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert append_step_summary(folder) is None
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    assert append_step_summary(folder) == target
    assert target.read_text(encoding="utf-8") == "earlier step\n\n# Campaign c\n\n## Frontier\n\n"
    (folder / "summary.md").write_text("x" * 1_000_000, encoding="utf-8")
    append_step_summary(folder)
    assert len(target.read_bytes()) < 950_000 and "cut at" in target.read_text(encoding="utf-8")
    assert json.dumps  # noqa: B018 - json kept for the records' shape above
