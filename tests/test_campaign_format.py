"""The campaign format: one reader, older folders brought up to the typed records, newer ones refused."""

from __future__ import annotations

import json
import re
import shutil
import typing
from pathlib import Path

import pytest

from pytest_agentic.campaign import resume, stored
from pytest_agentic.campaign.format import FORMAT_VERSION, UNVERSIONED, upgrade_manifest, upgrade_record, \
    upgrade_transcript
from pytest_agentic.campaign.merge import MergeError, merge
from pytest_agentic.report import cli as report_cli
from pytest_agentic.run.records import RunRecord, Transcript
from pytest_agentic.run.task import Final, ToolCall
from pytest_agentic.verdicts import compare, leaderboard, revisions
from pytest_agentic.verdicts.rescore import Replay

from . import legacy
from .helpers import ROOT, campaign_dir, runs
from .records import NANO_NOW, NANO_THEN, scores


def required(typed: type) -> set[str]:
    """The keys a TypedDict requires (read from its hints: ``__required_keys__`` misses string annotations)."""
    hints = typing.get_type_hints(typed, include_extras=True)
    return {k for k, v in hints.items() if typing.get_origin(v) is not typing.NotRequired}


def _records(per_task: dict[str, int], *, hashes: str = "a") -> list[dict]:
    records = scores(per_task)
    for r in records:
        r["task_hash"] = hashes * 64
    return records


@pytest.mark.parametrize("shape", legacy.SHAPES)
def test_an_older_folder_is_read_as_the_current_typed_records(tmp_path, shape):
    folder = legacy.write(tmp_path / f"old-{shape}", shape, _records(NANO_THEN))
    raw = json.loads((folder / "runs.jsonl").read_text().splitlines()[0])
    assert "format_version" not in json.loads((folder / "campaign.json").read_text())
    campaign = stored.load(folder)
    assert campaign.format_version == UNVERSIONED
    assert campaign.manifest["format_version"] == FORMAT_VERSION
    assert revisions.of(campaign.manifest) == legacy.REVISION[shape]
    assert len(campaign.records) == 30
    for record in campaign.records:
        assert required(RunRecord) <= set(record), shape
        assert record["task_hash"] == "a" * 64
    # What the older writer lacked is read as unknown; what it wrote is kept as written.
    first = campaign.records[0]
    assert first["sandbox"] is None and ("sandbox" in raw) == (shape in ("revision2_sandbox", "revision3"))
    assert {k: v for k, v in first.items() if k in raw} == raw
    transcript = campaign.transcript(first)
    assert required(Transcript) <= set(transcript)
    assert transcript["server_refusal"] is None and transcript["messages"][1]["role"] == "user"
    assert campaign.manifest["tasks"]["task_01"]["content_hash"] == "a" * 64


def test_older_folders_are_compared_ranked_and_reported(tmp_path, capsys):
    then = legacy.write(tmp_path / "runs" / "then", "first", _records(NANO_THEN))
    revised = _records(NANO_NOW)
    for r in revised:
        if r["task"] == "task_09":
            r["task_hash"] = "b" * 64
    rev2 = legacy.write(tmp_path / "runs" / "rev2", "revision2", _records(NANO_THEN))
    now = legacy.write(tmp_path / "runs" / "now", "revision3", revised)

    assert compare.main([str(then), str(now)]) == 0
    out = capsys.readouterr().out
    assert "Then: `then`; now: `now`" in out and re.search(r"\| Total +\| 10/30 +\| 15/30 +\| \+5", out)
    assert re.search(r"task_09 name_task_09 +\| 0/3 +\| 0/3 +\| flat; task changed", out)  # hashes of both writers
    assert compare.main([str(rev2), str(now)]) == 0
    out = capsys.readouterr().out
    assert "flat; revision 2 -> 3" in out and "benchmark revision 2 then, revision 3 now" in out

    assert leaderboard.main([str(tmp_path / "runs")]) == 0
    board = capsys.readouterr().out
    assert [m.group(1) for m in re.finditer(r"\| m +\| (\w+) +\| +(-|2|3) ", board)] == ["now", "rev2", "then"]
    assert "task_09 differs between the campaigns (an unrecorded revision: then; revision 2: rev2; revision 3: now)" \
        in board

    assert report_cli.main([str(then)]) == 0
    page = (then / "report.html").read_text()
    assert "task_01" in page and "ANSWER: 42" in page


def test_an_older_folder_is_resumed_and_rescored_from_its_records(tmp_path):
    folder = legacy.write(tmp_path / "old", "first", _records({"task_07": 3, "task_08": 2}))
    records = resume.load_runs(folder)
    assert len(records) == 6 and all(r["sandbox"] is None for r in records)
    assert resume.load_manifest(folder)["resumed_at"] == []
    assert len(resume.finished(records)) == 6
    replay = Replay(folder)
    assert replay.seed == 0 and replay.runs == 3 and replay.cases("task_08") == [("m", 1), ("m", 2), ("m", 3)]
    steps = replay.solution("task_08", "m", 3)
    assert steps == [[ToolCall("fs_read", {}, raw_arguments='{"path": "a"}')], Final("ANSWER: 41")]


def test_older_shards_are_merged_into_a_current_folder(tmp_path):
    one = _records({"task_07": 3})
    two = _records({"task_08": 1})
    a = legacy.write(tmp_path / "a", "revision3", one, shard={"index": 1, "count": 2})
    b = legacy.write(tmp_path / "b", "revision3", two, shard={"index": 2, "count": 2})
    merged = merge([a, b], tmp_path / "out")
    manifest = json.loads((merged / "campaign.json").read_text())
    assert manifest["format_version"] == FORMAT_VERSION and manifest["complete"] is True
    campaign = stored.load(merged)
    assert campaign.format_version == FORMAT_VERSION and len(campaign.records) == 6
    assert {json.dumps(r, sort_keys=True) for r in campaign.records} == \
        {json.dumps(upgrade_record(legacy.shaped("revision3", "record", r)), sort_keys=True) for r in one + two}


def _newer(tmp_path: Path, version: object) -> Path:
    folder = legacy.write(tmp_path / "future", "revision3", _records({"task_01": 1}), shard={"index": 1, "count": 1})
    manifest = json.loads((folder / "campaign.json").read_text())
    manifest["format_version"] = version
    (folder / "campaign.json").write_text(json.dumps(manifest))
    return folder


def test_a_newer_format_is_refused_naming_the_file_and_its_version(tmp_path, capsys):
    folder = _newer(tmp_path, FORMAT_VERSION + 1)
    where = str(folder / "campaign.json")
    with pytest.raises(stored.CampaignFolderError) as caught:
        stored.load(folder)
    message = str(caught.value)
    assert message.startswith(where) and f"format_version {FORMAT_VERSION + 1} is newer" in message
    assert f"(up to {FORMAT_VERSION})" in message
    assert compare.main([str(folder), str(folder)]) == 2
    assert f"compare: {where}: format_version {FORMAT_VERSION + 1}" in capsys.readouterr().err
    with pytest.raises(pytest.UsageError, match=f"--agentic-resume: .*format_version {FORMAT_VERSION + 1} is newer"):
        resume.load_manifest(folder)
    with pytest.raises(MergeError, match=f"format_version {FORMAT_VERSION + 1} is newer"):
        merge([folder], tmp_path / "out")
    with pytest.raises(stored.CampaignFolderError, match="format_version '1' is not a whole number"):
        stored.load(_newer(tmp_path / "text", "1"))


def test_reading_checks_each_record_and_resuming_skips_a_torn_line(tmp_path):
    folder = legacy.write(tmp_path / "c", "revision3", _records({"task_01": 2}))
    lines = (folder / "runs.jsonl").read_text().splitlines()
    again = json.loads(lines[0])
    again["passed"] = False
    (folder / "runs.jsonl").write_text("\n".join([*lines, json.dumps(again), lines[1][:40]]) + "\n")
    with pytest.raises(stored.CampaignFolderError, match=r"runs.jsonl:5: not valid JSON"):
        stored.load(folder)
    records = resume.load_runs(folder)  # the torn line is a run to run again; the last record of a run wins
    assert len(records) == 3 and [r["passed"] for r in records if r["run"] == 1] == [False]
    (folder / "runs.jsonl").write_text(lines[0] + "\n" + json.dumps({"task": "t"}) + "\n")
    with pytest.raises(stored.CampaignFolderError, match=r"runs.jsonl:2: a run record lacks model, run, passed"):
        stored.load(folder)
    with pytest.raises(pytest.UsageError, match=r"--agentic-resume: .*runs.jsonl:2: a run record lacks"):
        resume.load_runs(folder)
    (folder / "runs.jsonl").write_text("[1, 2]\n")
    with pytest.raises(stored.CampaignFolderError, match=r"runs.jsonl:1: a run record must be a JSON object"):
        stored.load(folder)


def test_upgrades_fill_in_unknowns_without_touching_what_they_read():
    raw = {"task": "t", "model": "m", "run": 1, "passed": True, "failure_mode": None}
    record = upgrade_record(raw)
    assert raw == {"task": "t", "model": "m", "run": 1, "passed": True, "failure_mode": None}
    assert record["task_hash"] is None and record["cost_usd"] is None and record["tags"] == {}
    record["tags"]["x"] = 1
    assert upgrade_record(raw)["tags"] == {}  # each record its own tags
    assert upgrade_record(dict(record)) == record  # idempotent
    transcript = upgrade_transcript({"messages": [{"role": "user", "content": "u"}]})
    assert transcript["server_refusal"] is None and transcript["tool_calls"] == []
    manifest = upgrade_manifest({"campaign_id": "c", "benchmark_revision": 2})
    assert manifest["benchmark_revision"] == 2 and manifest["tasks"] == {} and manifest["format_version"] == 1


# -- a session on a folder an earlier release wrote -------------------------------------------------
MODELS = """\
default: [oracle]
models:
  oracle:
    model: agentic-scripted/oracle
    price: {input_per_token: 0.0, output_per_token: 0.0}
"""


@pytest.fixture
def project(pytester):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    (pytester.path / "models.yaml").write_text(MODELS)
    return pytester


def _session(pytester, *args: str):
    return pytester.runpytest_subprocess("tasks", "-p", "no:randomly", "-p", "no:cacheprovider", *args)


def test_a_session_resumes_compares_and_rescores_a_folder_of_the_first_writer(project):
    _session(project, "-m", "task_08", "--agentic-out", "old").assert_outcomes(passed=3)
    old = campaign_dir(project.path / "old")
    assert json.loads((old / "campaign.json").read_text())["format_version"] == FORMAT_VERSION
    legacy.reshape(old, "first")
    assert all("sandbox" not in r for r in runs(old))
    # The session that wrote it was cut short: its last run is missing.
    lines = (old / "runs.jsonl").read_text().splitlines()
    (old / "runs.jsonl").write_text("\n".join(lines[:2]) + "\n")

    resumed = _session(project, "-m", "task_08", "--agentic-resume", str(old))
    resumed.assert_outcomes(passed=1)
    manifest = json.loads((old / "campaign.json").read_text())
    assert manifest["format_version"] == FORMAT_VERSION and len(manifest["resumed_at"]) == 1
    assert len(runs(old)) == 3 and all("task_hash" in r and "sandbox" in r for r in runs(old))

    legacy.reshape(old, "first")
    result = _session(project, "-m", "task_08", "--agentic-rescore", str(old), "--agentic-compare", str(old),
                      "--agentic-out", "new")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*no model called*3 passes then, 3 now*"])
    new = campaign_dir(project.path / "new")
    assert json.loads((new / "campaign.json").read_text())["compared_with"]["campaign_id"] == old.name
    assert all(r["rescore_of"] == old.name and r["original"] == {"passed": True, "failure_mode": None}
               for r in runs(new))


def _sessions(folder: Path, listed: object) -> None:
    manifest = json.loads((folder / "campaign.json").read_text())
    manifest["sessions"] = listed
    (folder / "campaign.json").write_text(json.dumps(manifest))


def test_merged_shards_list_every_session_and_say_where_their_releases_differ(tmp_path):
    a = legacy.write(tmp_path / "a", "revision3", _records({"task_07": 3}), shard={"index": 1, "count": 2})
    b = legacy.write(tmp_path / "b", "revision3", _records({"task_08": 1}), shard={"index": 2, "count": 2})
    first = json.loads((a / "campaign.json").read_text())
    harness, litellm = first["harness_version"], first["litellm_version"]
    # Shard b began under the same releases and was resumed under another litellm.
    _sessions(b, [{"started_at": "2999-01-01T00:00:00+00:00", "resumed": False, "harness_version": harness,
                   "litellm_version": litellm, "call_route": None, "xdist_workers": None, "runs_added": 2},
                  {"started_at": "2999-01-02T00:00:00+00:00", "resumed": True, "harness_version": harness,
                   "litellm_version": "9.9.9\n# `edited`", "call_route": None, "xdist_workers": None,
                   "runs_added": 1}])
    manifest = json.loads((merge([a, b], tmp_path / "out") / "campaign.json").read_text())
    assert [s["litellm_version"] for s in manifest["sessions"]] == [litellm, litellm, "9.9.9\n# `edited`"]
    assert [s["runs_added"] for s in manifest["sessions"]] == [None, 2, 1]  # a's one session: written before counts
    assert manifest["litellm_version"] == litellm  # the first session's: nothing rewritten
    said = [n for n in manifest["notes"] if "different litellm values" in n]
    # What the file says is shown literally, on one line.
    assert len(said) == 1 and "session 3 (resumed `2999-01-02T00:00:00+00:00`, 1 run): `9.9.9 # 'edited'`" in said[0]
    assert "\n" not in said[0]
    assert not any("pytest-agentic values" in n for n in manifest["notes"])

    # A shard resumed under another harness is refused, naming it, though its first session agrees.
    _sessions(b, [{"started_at": "2999-01-01T00:00:00+00:00", "resumed": False, "harness_version": harness,
                   "litellm_version": litellm, "call_route": None, "xdist_workers": None, "runs_added": 2},
                  {"started_at": "2999-01-02T00:00:00+00:00", "resumed": True, "harness_version": "0.0.1",
                   "litellm_version": litellm, "call_route": None, "xdist_workers": None, "runs_added": 1}])
    with pytest.raises(MergeError, match=re.escape(f"{b}: a session that wrote it ran pytest-agentic '0.0.1'")):
        merge([a, b], tmp_path / "out")


@pytest.mark.parametrize("listed, said", [
    ({"started_at": "x"}, "'sessions' must be a list, got dict"),
    (["x"], "sessions[0] must be an object, got str"),
    ([{"started_at": "x", "resumed": False, "harness_version": 1, "runs_added": 0}],
     "sessions[0] key 'harness_version' must be str, got 1"),
    ([{"started_at": "x", "resumed": False, "harness_version": "1", "runs_added": True}],
     "sessions[0] key 'runs_added' must be int or null, got True"),
])
def test_a_malformed_sessions_list_is_refused_naming_the_entry_and_key(tmp_path, listed, said):
    folder = legacy.write(tmp_path / "c", "revision3", _records({"task_01": 1}))
    _sessions(folder, listed)
    with pytest.raises(stored.CampaignFolderError, match=re.escape(f"{folder / 'campaign.json'}: {said}")):
        stored.load(folder)


def test_compare_says_what_two_campaigns_were_measured_with_where_it_differs(tmp_path, capsys):
    a = legacy.write(tmp_path / "a", "revision3", _records({"task_07": 3}))
    b = legacy.write(tmp_path / "b", "revision3", _records({"task_07": 3}))
    assert compare.main([str(a), str(b)]) == 0
    assert "measured with" not in capsys.readouterr().out
    first = json.loads((a / "campaign.json").read_text())
    harness, litellm = first["harness_version"], first["litellm_version"]
    # b was resumed under another litellm, on litellm's handler; a recorded no route: the route is not said.
    _sessions(b, [{"started_at": "2999-01-01T00:00:00+00:00", "resumed": False, "harness_version": harness,
                   "litellm_version": litellm, "call_route": None, "xdist_workers": None, "runs_added": 2},
                  {"started_at": "2999-01-02T00:00:00+00:00", "resumed": True, "harness_version": harness,
                   "litellm_version": "9.9.9", "call_route": "litellm-http", "xdist_workers": None,
                   "runs_added": 1}])
    assert compare.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert f"- measured with: litellm `{litellm}` then, `{litellm}`, `9.9.9` now: a change between the two" in out
    assert "call route" not in out and "pytest-agentic `" not in out


def test_a_value_one_session_did_not_record_is_not_said_to_differ():
    from pytest_agentic.campaign import sessions

    def one(started: str, route: str | None, litellm: str | None) -> dict:
        return {"started_at": started, "resumed": started != "a", "harness_version": "1", "litellm_version": litellm,
                "call_route": route, "xdist_workers": None, "runs_added": 1}

    # A folder written before call_route was recorded, resumed on litellm's handler: nothing to say.
    assert sessions.differences([one("a", None, "1.0"), one("b", "litellm-http", "1.0")]) == []
    notes = sessions.differences([one("a", None, "1.0"), one("b", "openai-sdk", "1.0"), one("c", "litellm-http", "1.0")])
    assert notes == ["the sessions that wrote this campaign ran under different call route values: session 1 "
                     "(began `a`, 1 run): not recorded; session 2 (resumed `b`, 1 run): `openai-sdk`; session 3 "
                     "(resumed `c`, 1 run): `litellm-http`."]
    assert sessions.versus([one("a", None, None)], [one("b", "litellm-http", "2.0")]) == []
