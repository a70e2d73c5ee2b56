"""Changed tasks are visible: the comparison names tasks whose content hash differs, and campaign.json
names the benchmark revision."""

from __future__ import annotations

import json
import shutil

from pytest_agentic.verdicts import compare
from pytest_agentic.run.task import BENCHMARK_REVISION

from .helpers import ROOT, campaign_dir, runs
from .records import scores, write_campaign


def test_tasks_whose_content_changed_are_named_per_task_and_in_the_verdict():
    then, now = scores({"task_08": 3, "task_09": 0, "task_01": 2}), scores({"task_08": 3, "task_09": 3, "task_01": 2})
    for r in then:
        r["task_hash"] = "a" * 64
    for r in now:
        r["task_hash"] = "b" * 64 if r["task"] in ("task_08", "task_09") else "a" * 64
    result = compare.compare(then, now, then_id="old", now_id="new")
    rows = {row["task"].split()[0]: row["change"] for row in compare.task_rows(result)}
    assert {k: v for k, v in rows.items() if k.startswith("task_")} == {
        "task_01": "flat", "task_08": "flat; task changed", "task_09": "up; task changed"}
    sentence = result.models[0].sentence()
    assert "caveat: 2 task(s) changed" in sentence and "task_08, task_09" in sentence
    assert "changed tasks: task_08, task_09" in compare.markdown(result)


def test_campaigns_without_hashes_are_not_said_to_differ():
    plain = compare.compare(scores({"task_08": 3}), scores({"task_08": 3}))
    assert plain.models[0].changed_tasks == [] and "caveat" not in plain.models[0].sentence()


def test_a_campaign_names_its_revision_and_the_tasks_that_changed_since_the_baseline(pytester):
    shutil.copytree(ROOT / "tasks", pytester.path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "models.yaml", pytester.path / "models.yaml")
    old = scores({"task_07": 3, "task_08": 3}, model="oracle")
    for r in old:
        r["task_hash"] = "0" * 64 if r["task"] == "task_08" else None
    baseline = write_campaign(pytester.path / "baseline", old)
    result = pytester.runpytest_subprocess("tasks", "--model", "oracle", "-m", "task_07 or task_08",
                                           "--agentic-out", "out", f"--agentic-compare={baseline}")
    result.assert_outcomes(passed=6)
    folder = campaign_dir(pytester.path / "out")
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["benchmark_revision"] == BENCHMARK_REVISION
    assert manifest["compared_with"]["models"][0]["changed_tasks"] == ["task_08"]
    assert {r["task"] for r in runs(folder)} == {"task_07", "task_08"}
    summary = (folder / "summary.md").read_text()
    assert f"revision {BENCHMARK_REVISION}" in summary and "flat; task changed" in summary
    result.stdout.fnmatch_lines(["*caveat: 1 task(s) changed*task_08*"])


def test_campaigns_of_two_revisions_say_per_task_which_tasks_were_revised():
    then, now = scores({"task_01": 3, "task_08": 3}), scores({"task_01": 3, "task_08": 2})
    for r in [*then, *now]:
        r["task_hash"] = ("b" if r in now and r["task"] == "task_08" else "a") * 64
    result = compare.compare(then, now, then_id="old", now_id="new", revisions=(2, 3))
    rows = {row["task"].split()[0]: row["change"] for row in compare.task_rows(result)}
    assert rows["task_01"] == "flat" and rows["task_08"] == "down; revision 2 -> 3"
    assert "revision 2 then, revision 3 now; content hash differs: task_08" in result.models[0].sentence()
    text = compare.markdown(result)
    assert "- benchmark revision 2 then, revision 3 now: task_08 differ between them" in text
    same = compare.compare(then, now, revisions=(3, 3))
    assert "revision" not in compare.markdown(same) and "task changed" in compare.markdown(same)


def test_the_leaderboard_names_the_tasks_that_differ_between_revisions(tmp_path, capsys):
    from pytest_agentic.verdicts import leaderboard

    root = tmp_path / "results"
    for name, revision, hashes in (("c2", 2, {"task_01": "a", "task_08": "b"}),
                                   ("c3", 3, {"task_01": "a", "task_08": "c"}),
                                   ("c3b", 3, {"task_01": "a", "task_08": "c"})):
        write_campaign(root / name, scores({"task_01": 3, "task_08": 2}), benchmark_revision=revision,
                       tasks={t: {"content_hash": h * 64} for t, h in hashes.items()})
    assert leaderboard.main([str(root)]) == 0
    out = capsys.readouterr().out
    assert "- task_08 differs between the campaigns (revision 2: c2; revision 3: c3, c3b)" in out
    assert "task_01 differs" not in out
    header = next(line for line in out.splitlines() if line.startswith("|"))
    assert [c.strip() for c in header.strip("|").split("|")][3] == "revision"
    write_campaign(tmp_path / "same" / "a", scores({"task_01": 3}), benchmark_revision=3)
    assert leaderboard.main([str(tmp_path / "same")]) == 0
    assert "differs" not in capsys.readouterr().out


#: The content hashes of revision 3's canonical instances (seed 0), as its campaigns recorded them.
REVISION_3 = {
    "task_01": "a4ea52c21fa64aa807768cc4609e11103331b7641beea5f5cbe65372c593059a",
    "task_02": "4fd949213cd1dbc5ceca904ab6185e7ba309c27b64faa8db17ee0ae9ca9b6e70",
    "task_03": "609b8ad80087a400874250c738bbb999752ed978e77c524f03e2e871ee4da3cf",
    "task_04": "2cc86388e3bfc558a71e2c69233dd586a6780fb4eba278f48f6716ea7cd5125e",
    "task_05": "eb1b2bd2b3c7abf82fcebda564372bfe117972c9167dd56275bdd4ce3d4ac66a",
    "task_06": "6fe1deddb3eb3dbef5e5c6d2e89fe3316a4959c8d6017a6aaa4d41ae717be957",
    "task_07": "5c7fd89c29b34408d8d3f1033eeef9656cc9e426796f72e5d62b4f67792e2715",
    "task_08": "eaca7cea9158c1aba533cc2e1ad9cca7408539a7bf5d092324c10da102ff6822",
    "task_09": "6840c1f1ab63b342b34b7cec9daa5b8954673bac2cea9d4b5b9b7cfa527e6a25",
    "task_10": "208afb8c69ca7f02410428d003577a18b4b23da822090eb262c2dbe77c5ea056",
}
#: What revision 4 changed (issue 24): the answer tasks whose lines or contract it restated, and the workspace
#: tasks whose held-out cases it widened (01, 05) ...
REVISED_IN_4 = {"task_01", "task_02", "task_03", "task_04", "task_05", "task_06", "task_08", "task_09", "task_10"}
#: ... and what it left alone.
KEPT_IN_4 = {"task_07"}


def _today() -> dict[str, str]:
    from .helpers import load_task_module

    return {f"task_{p.stem.split('_')[2]}": load_task_module(p).build(0).content_hash()
            for p in sorted((ROOT / "tasks").glob("test_task_*.py"))}


def test_revision_4_is_named_with_the_tasks_it_changed_by_compare_and_the_leaderboard(tmp_path, capsys):
    from pytest_agentic.verdicts import leaderboard

    assert BENCHMARK_REVISION == 4
    today = _today()
    changed = {t for t, h in REVISION_3.items() if today[t] != h}
    assert REVISED_IN_4 <= changed and not KEPT_IN_4 & changed, sorted(changed)
    tasks = dict.fromkeys(REVISION_3, 3)
    then, now = scores(tasks), scores(tasks)
    for r in then:
        r["task_hash"] = REVISION_3[r["task"]]
    for r in now:
        r["task_hash"] = today[r["task"]]
    result = compare.compare(then, now, then_id="r3", now_id="r4", revisions=(3, BENCHMARK_REVISION))
    rows = {row["task"].split()[0]: row["change"] for row in compare.task_rows(result)}
    assert {t for t, change in rows.items() if change.endswith("revision 3 -> 4")} == changed
    assert f"revision 3 then, revision 4 now; content hash differs: {', '.join(sorted(changed))}" in \
        result.models[0].sentence()
    root = tmp_path / "results"
    for name, revision, hashes in (("r3", 3, REVISION_3), ("r4", 4, today)):
        write_campaign(root / name, scores(tasks), benchmark_revision=revision,
                       tasks={t: {"content_hash": h} for t, h in hashes.items()})
    assert leaderboard.main([str(root)]) == 0
    out = capsys.readouterr().out
    said = {line.split()[1] for line in out.splitlines() if "differs between the campaigns (revision 3: r3; "
            "revision 4: r4)" in line}
    assert said == changed, out


def test_a_rescore_of_a_revision_3_campaign_names_the_tasks_revision_4_changed(tmp_path):
    from pytest_agentic.verdicts import rescore

    today = _today()
    changed = {t for t, h in REVISION_3.items() if today[t] != h}
    old = scores(dict.fromkeys(REVISION_3, 3), runs=1)
    for r in old:
        r["task_hash"] = REVISION_3[r["task"]]
    folder = write_campaign(tmp_path / "r3", old, benchmark_revision=3, models=[{"name": "m", "model": "x/m"}])
    for r in old:
        path = folder / r["transcript"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"messages": [{"role": "user", "content": "u"},
                                                 {"role": "assistant", "content": "done"}]}))
    replay = rescore.Replay(folder)
    records = []
    for r in old:
        new = {**r, "task_hash": today[r["task"]], "tags": {}}
        replay.annotate(new, {"messages": [{"role": "user", "content": "u"}], "tool_calls": []})
        records.append(new)
    assert {r["task"] for r in records if r["tags"].get("task_changed")} == changed
    text = rescore.markdown(replay, records)
    assert f"Changed since the campaign (content hash differs; the recorded calls were replayed on today's " \
           f"instance): {', '.join(sorted(changed))}." in text
