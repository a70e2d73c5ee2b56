"""Rescoring, the parts without a session: transcripts become replay scripts; restricting models."""

from __future__ import annotations

from pytest_agentic.campaign.format import upgrade_transcript
from pytest_agentic.verdicts.rescore import solution_of
from pytest_agentic.run.scripted import Fault
from pytest_agentic.run.task import Final, ToolCall


CALL = {"id": "c1", "type": "function", "function": {"name": "fs_read", "arguments": '{"path": "a"}'}}
BAD = {"id": "c2", "type": "function", "function": {"name": "fs_nope", "arguments": "{not json"}}


def transcript(stop, *assistant):
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    for m in assistant:
        messages.append(m)
        for c in m.get("tool_calls") or []:
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": "r"})
    # As the reader gives it (campaign.stored): keys this shape lacks are filled in.
    return upgrade_transcript({"messages": messages, "stop_reason": stop, "reason": "boom"})


def test_recorded_turns_become_the_script_verbatim():
    steps = solution_of(transcript("final_answer", {"role": "assistant", "content": None, "tool_calls": [CALL, BAD]},
                                   {"role": "assistant", "content": "done"}))
    assert steps[0] == [ToolCall("fs_read", {}, raw_arguments='{"path": "a"}'),
                        ToolCall("fs_nope", {}, raw_arguments="{not json")]
    assert steps[0][1].arguments_json() == "{not json"  # hallucinated arguments replay as sent
    assert steps[1] == Final("done")


def test_lost_and_cut_runs_replay_as_such():
    lost = solution_of(transcript("infra_error", {"role": "assistant", "content": None, "tool_calls": [CALL]}))
    assert isinstance(lost[-1], Fault) and "infra error" in lost[-1].message and len(lost) == 2
    cut = solution_of(transcript("truncated", {"role": "assistant", "content": "The answer is"}))
    assert cut == []
    empty = solution_of(transcript("empty_final", {"role": "assistant", "content": ""}))
    assert empty == [Final("")]


def test_a_refused_run_replays_the_refusal_and_is_judged_the_same(tmp_path):
    from pytest_agentic.run.calls import refusals
    from pytest_agentic.run.failures import classify, tags
    from pytest_agentic.run.records import FailureMode
    from pytest_agentic.run.task import TaskInstance

    from .helpers import play

    for message, cause, mode in [
        ("request (3031 tokens) exceeds the available context size (1024 tokens), try increasing it",
         "context_overflow", FailureMode.GAVE_UP_MID_PLAN),
        ("Failed to parse tool call arguments as JSON: parse error", "malformed_tool_call",
         FailureMode.TOOL_CALL_HALLUCINATED)]:
        recorded = transcript("server_refusal", {"role": "assistant", "content": None, "tool_calls": [CALL]})
        recorded["server_refusal"] = {"cause": cause, "message": message}
        steps = solution_of(recorded)
        assert steps[-1] == Fault(message)
        instance = TaskInstance(prompt="u", files={"a": "x"}, tools=("fs_read",))
        result = play(instance, steps, tmp_path / cause)
        assert result.stop_reason == "server_refusal" and result.infra_error is None
        assert tags(result)[refusals.TAG] == cause and classify(result, passed=False) is mode


def test_a_rescore_can_be_restricted_to_some_models(tmp_path):
    import pytest

    from pytest_agentic.verdicts.rescore import Replay, RescoreError

    from .records import scores, write_campaign

    folder = write_campaign(tmp_path / "c", scores({"t": 1}, model="a") + scores({"t": 2}, model="b"),
                            models=[{"name": "a", "model": "x/a", "limits": {"max_turns": 5}}, {"name": "b"}])
    replay = Replay(folder)
    assert replay.cases("t") == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]
    assert replay.entries["a"].model == "agentic-scripted/replay" and replay.entries["a"].limits == {"max_turns": 5}
    replay.restrict(["b"])
    assert replay.cases("t") == [("b", 1), ("b", 2), ("b", 3)] and list(replay.entries) == ["b"]
    with pytest.raises(RescoreError, match="--model c: not in the rescored campaign c"):
        Replay(folder).restrict(["c"])
