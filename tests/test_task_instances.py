"""Tasks 01-06 and 10 of agentic-core-v1, proven without a real model.

The core's scripted model plays each task's reference solution and near-misses
through litellm and the agent loop, and the task's own checker judges the run:
every reference must pass and every near-miss must be rejected (as
``wrong_answer``), for the canonical seed and for random others; other correct
solutions, worded or coded differently, must pass too; instances must vary
with the seed, and the canonical one must not drift (pinned digests).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentic import CANONICAL_SEED, Final, TaskInstance, ToolCall
from pytest_agentic.run.failures import classify
from pytest_agentic.run.records import FailureMode
from pytest_agentic.run.task import TaskSpec
from pytest_agentic.run.tools import Workspace, run_bounded

from .helpers import load_task_module, play

TASKS_DIR = Path(__file__).resolve().parents[1] / "tasks"

#: task id -> (module file stem, task name)
TASKS: dict[str, tuple[str, str]] = {
    "task_01": ("test_task_01_fix_failing_test", "fix_failing_test"),
    "task_02": ("test_task_02_refactor_duplicated_code", "refactor_duplicated_code"),
    "task_03": ("test_task_03_investigate_log", "investigate_log"),
    "task_04": ("test_task_04_trace_through_codebase", "trace_through_codebase"),
    "task_05": ("test_task_05_minimal_fix", "minimal_fix"),
    "task_06": ("test_task_06_handle_ambiguous_requirement", "handle_ambiguous_requirement"),
    "task_10": ("test_task_10_sql_investigation", "sql_investigation"),
}
TASK_IDS = [t for t, (stem, _) in TASKS.items() if (TASKS_DIR / f"{stem}.py").is_file()]

#: The digest of each canonical (seed 0) instance: its content hash, prompt and scripted
#: solutions. A change here is a change of the benchmark: bump it on purpose, never just
#: to make this test pass. Revision 3 (issue 18) re-pinned tasks 03, 04, 06 and 10: answer lines.
#: Revision 4 (issue 24) re-pinned tasks 03, 04 and 06: one hedge rule stated; task_06's closed form.
#: Revision 5 (issue 33) re-pinned tasks 03, 04, 06 and 10: each answer line holds only its value (prompts,
#: references and near-misses without notes); task_04's layout of packages; task_06's ticket states its units.
PINNED = {
    "task_01": "7f7989d0e2c45561337c41b60d5ae344f163a5fdf4f937eeecbce433b741606a",
    "task_02": "26ba2f16d17fcf10afee5b096b820e78de0d5019037f9e6e2beb969c62946170",
    "task_03": "f433293b31f61ec5706bc34de72485b6913cdbe6ee136acf938f397b7821d11b",
    "task_04": "a93a14fccc1a66d6003ea421933e53a443a5960fd77afda6c3e68993d2a3e84c",
    "task_05": "52b48b81e2f87deabab511b82b407ef2a7f16c7b0db49cd6326507d3021ec8a7",
    "task_06": "6f80243193a68d8a0326e2efeb84fcdc2a2dce9cec8cab622295b52f65a62964",
    "task_10": "24197d4cf163ae9ff10e6b653e6fd25ade9f34d2c54526ad896bd43c5a71cf7b",
}

#: Checkers that run subprocesses get fewer random seeds, to keep this file quick.
SLOW = {"task_01", "task_02", "task_05", "task_06"}

def load(task_id: str) -> ModuleType:
    return load_task_module(TASKS_DIR / f"{TASKS[task_id][0]}.py")


# --------------------------------------------------------------------------- the driver
# Solutions are played by the core's scripted model through litellm and the agent
# loop (tests/helpers.py), the same path `pytest --model oracle` takes.


def verdict(task_id: str, instance: TaskInstance, solution) -> str | None:
    """None when the checker accepts the solution, else its rejection message.

    A rejected run must also classify as ``wrong_answer``: it ended with a final answer
    and made no hallucinated or redundant call, so the checker alone turned it down.
    """
    with tempfile.TemporaryDirectory(prefix=f"{task_id}-") as tmp:
        run = play(instance, solution, Path(tmp) / "ws")
        assert run.stop_reason == "final_answer", f"the script did not finish: {run.stop_reason}"
        try:
            load(task_id).check(instance, run)
        except AssertionError as exc:
            mode = classify(run, passed=False)
            assert mode is FailureMode.WRONG_ANSWER, f"a rejected run classified as {mode}"
            return str(exc) or "rejected"
    return None


def assert_proven(task_id: str, seed: int) -> None:
    instance = load(task_id).build(seed)
    assert len(instance.near_misses) >= 2, f"{task_id} needs at least two near-misses"
    rejection = verdict(task_id, instance, instance.reference)
    assert rejection is None, f"{task_id} seed {seed}: the reference was rejected: {rejection}"
    for name, solution in instance.near_misses.items():
        rejection = verdict(task_id, instance, solution)
        assert rejection is not None, f"{task_id} seed {seed}: near-miss {name!r} was accepted"


def canonical_digest(instance: TaskInstance) -> str:
    """content_hash plus the scripted solutions: what must not drift silently."""
    h = hashlib.sha256(instance.content_hash().encode())
    h.update(repr(instance.reference).encode())
    h.update(repr(sorted(instance.near_misses.items())).encode())
    h.update(instance.prompt.encode())
    return h.hexdigest()


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_declared_as_task(task_id: str) -> None:
    module = load(task_id)
    fns = [v for k, v in vars(module).items() if k.startswith("test_") and callable(v)]
    assert len(fns) == 1
    marks = [m for m in getattr(fns[0], "pytestmark", []) if m.name == "agentic_task"]
    assert len(marks) == 1, "the test function needs one @task(...) decorator"
    spec = marks[0].args[0]
    assert isinstance(spec, TaskSpec) and spec.id == task_id and spec.name == TASKS[task_id][1]
    assert spec.description and module.__doc__


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_canonical_reference_passes_and_near_misses_fail(task_id: str) -> None:
    instance = load(task_id).build(CANONICAL_SEED)
    assert verdict(task_id, instance, instance.reference) is None
    assert len(instance.near_misses) >= 2
    for name, solution in instance.near_misses.items():
        assert verdict(task_id, instance, solution) is not None, f"near-miss {name!r} was accepted"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_tool_calls_succeed(task_id: str) -> None:
    instance = load(task_id).build(CANONICAL_SEED)
    with tempfile.TemporaryDirectory() as tmp:
        run = play(instance, instance.reference, Path(tmp) / "ws")
    assert run.tool_calls, "the reference makes no tool call"
    bad = [c for c in run.tool_calls if not c["ok"]]
    assert not bad, f"reference tool calls failed: {bad}"
    assert not run.redundant_calls


@pytest.mark.parametrize("task_id", [t for t in TASK_IDS if t not in SLOW])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_many_seeds(task_id: str, seed: int) -> None:
    assert_proven(task_id, seed)


@pytest.mark.parametrize("task_id", [t for t in TASK_IDS if t in SLOW])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(1, 10_000))
def test_many_seeds_slow_checkers(task_id: str, seed: int) -> None:
    assert_proven(task_id, seed)


@pytest.mark.parametrize("task_id", TASK_IDS)
@settings(max_examples=20, deadline=None)
@given(a=st.integers(0, 10_000), b=st.integers(0, 10_000))
def test_seeds_give_different_instances(task_id: str, a: int, b: int) -> None:
    if a == b:
        return
    build = load(task_id).build
    assert build(a).content_hash() != build(b).content_hash()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_canonical_instance_is_stable(task_id: str) -> None:
    build = load(task_id).build
    first, second = build(CANONICAL_SEED), build(CANONICAL_SEED)
    assert first.content_hash() == second.content_hash()
    assert canonical_digest(first) == canonical_digest(second)
    assert PINNED[task_id] is not None, f"pin {task_id}: {canonical_digest(first)}"
    assert canonical_digest(first) == PINNED[task_id], (
        f"the canonical instance of {task_id} changed: {canonical_digest(first)}"
    )


def test_instances_hold_only_text_and_bytes() -> None:
    for task_id in TASK_IDS:
        instance = load(task_id).build(CANONICAL_SEED)
        assert isinstance(instance.files, Mapping)
        for path, data in instance.files.items():
            assert isinstance(path, str) and not path.startswith("/") and ".." not in path.split("/")
            assert isinstance(data, (str, bytes))


# --------------------------------------------------------------------------- strictness both ways


@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize("seed", [CANONICAL_SEED, 1, 2])
def test_doing_nothing_fails(task_id: str, seed: int) -> None:
    """A quick fail (a final answer and no tool call) never passes."""
    instance = load(task_id).build(seed)
    for answer in ("Done.", "I could not find anything wrong."):
        assert verdict(task_id, instance, [Final(answer)]) is not None


def _written(solution, path: str, start: str | None = None) -> str:
    """The content ``path`` holds after the solution's writes and edits (from ``start``)."""
    content = start
    for step in solution:
        for call in [step] if isinstance(step, ToolCall) else ([] if isinstance(step, Final) else step):
            if call.name == "fs_write" and call.arguments["path"] == path:
                content = call.arguments["content"]
            elif call.name == "fs_edit" and call.arguments["path"] == path:
                assert content is not None and content.count(call.arguments["old_text"]) == 1
                content = content.replace(call.arguments["old_text"], call.arguments["new_text"])
    assert content is not None
    return content


_ALT_FIX_01 = {
    "to_cents": ("    return round(float(amount) * 100)\n",
                 "    from decimal import Decimal\n\n    return int(Decimal(amount) * 100)\n"),
    "chunk": ("    return [items[i:i + size] for i in range(0, len(items), size)]\n",
              "    out = []\n    start = 0\n    while start < len(items):\n"
              "        out.append(items[start:start + size])\n        start += size\n    return out\n"),
    "parse_duration": ('    for number, unit in re.findall(r"(\\d+)([hms])", text):\n',
                       '    for number, unit in re.findall(r"([0-9]+)\\s*([hms])", text):\n'),
}

_ALT_FIX_05 = {
    "is_leap_year": ["    return (year % 4 == 0 and year % 100 != 0) or year % 400 == 0\n"],
    "median": ["    return (xs[mid] + xs[mid - 1]) / 2\n", "    lo, hi = xs[mid - 1], xs[mid]\n    return (lo + hi) / 2\n"],
    "percent_change": ["    return 100 * (new - old) / old\n"],
}


def _alternatives(task_id: str, inst: TaskInstance) -> dict[str, list]:
    """Other correct solutions, worded or written differently from the reference."""
    exp = inst.expected
    ref = list(inst.reference)
    if task_id == "task_01":
        fixed = _written(ref, exp["module"], inst.files[exp["module"]])
        good, alt = _ALT_FIX_01[exp["function"]]
        return {"other_correct_fix": [ToolCall("fs_write", {"path": exp["module"], "content": fixed.replace(good, alt)}),
                                      Final("Fixed.")]}
    if task_id == "task_02":
        import ast

        code = _written(ref, exp["module"])
        tree = ast.parse(code)
        helper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_report")
        helper_src = ast.get_source_segment(code, helper) + "\n"
        split = code.replace(helper_src, "").replace('"""\n', '"""\n\nfrom _reportlib import _report\n', 1)
        partials = ["from functools import partial\n\n", helper_src, "\n"]
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name != "_report":
                call = fn.body[-1].value
                kws = "".join(f", {k.arg}={ast.unparse(k.value)}" for k in call.keywords)
                partials.append(f"{fn.name} = partial(_report, {ast.unparse(call.args[0])}, "
                                f"skip_status={ast.unparse(call.args[2])}{kws})\n")
        return {
            "helper_in_another_module": [
                ToolCall("fs_write", {"path": "_reportlib.py", "content": '"""Shared helper."""\n\n\n' + helper_src}),
                ToolCall("fs_write", {"path": exp["module"], "content": split}), Final("Refactored.")],
            "partials": [ToolCall("fs_write", {"path": exp["module"], "content": "".join(partials)}),
                         Final("Refactored with functools.partial.")],
        }
    if task_id == "task_03":
        return {"formatted": [Final(f"The reload of '{exp['key']}'.\n\n**ANSWER:** `ID={exp['event_id'].upper()}`")]}
    if task_id == "task_04":
        pkg, mod, value = exp["package"], exp["module"], exp["value"]
        return {
            "prose": [Final(f"The number comes from the fee() function in {pkg}/shipping/{mod}.py.\n\n"
                            f"VALUE: {value:,} cents\nFUNCTION: {pkg}/shipping/{mod}.py:fee()")],
            "dotted": [Final(f"FUNCTION: {pkg}.shipping.{mod}.fee\nVALUE: {value}")],
        }
    if task_id == "task_05":
        original = inst.files[exp["module"]]
        fixed = _written(ref, exp["module"], original)
        faulty = original.splitlines(keepends=True)[exp["faulty_line"] - 1]
        good = fixed.splitlines(keepends=True)[exp["faulty_line"] - 1]
        out = {}
        for i, alt in enumerate(_ALT_FIX_05[exp["function"]]):
            assert faulty in original
            out[f"alt_{i}"] = [ToolCall("fs_write", {"path": exp["module"],
                                                     "content": original.replace(faulty, alt)}), Final("Fixed.")]
        out["lost_final_newline"] = [ToolCall("fs_write", {"path": exp["module"], "content": fixed.rstrip("\n")}),
                                     Final(f"Fixed the line `{good.strip()}`.")]
        return out
    if task_id == "task_06":
        import re as _re

        module = exp["module"]
        up = _written(ref, module, inst.files[module])
        nearest = _re.sub(r"return -\(-(\w+) // (\d+)\)", r"return round(\1 / \2)", up)
        assert nearest != up
        return {
            "asks": [ToolCall("fs_read", {"path": "TICKET.md"}),
                     Final("Before I implement this: the ticket says to round to the nearest unit, but the finance "
                           "comment says every started unit is charged in full. Which one do you want?\n\n"
                           "QUESTION: nearest or up?")],
            "assumes_up_and_adds_a_test": [
                ToolCall("fs_write", {"path": module, "content": up}),
                ToolCall("fs_write", {"path": f"test_{module}", "content": inst.files[f"test_{module}"]
                                      + f"\n\ndef test_started_unit():\n    assert {exp['function']}(1) == 1\n"}),
                ToolCall("run_tests", {"path": "."}),
                Final("I added a test for it; every started unit is charged in full.\nASSUMPTION: up")],
            "assumes_nearest": [ToolCall("fs_write", {"path": module, "content": nearest}),
                                Final("Tests pass. The product owner's wording wins: values are rounded to the nearest "
                                      "unit, not charged per started unit.\n\nASSUMPTION: nearest")],
        }
    if task_id == "task_10":
        # the names of a column's cause are a set (any order); a missing table's are a pair (named, meant)
        names = exp["names"] if exp["kind"] == "missing_table" else list(reversed(exp["names"]))
        return {"upper_case_id": [Final(f"QUERY: Q-{exp['query_id'][2:].upper()}\nCAUSE: {exp['kind']}\n"
                                        f"NAMES: {', '.join(names)}")]}
    raise AssertionError(task_id)


@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize("seed", [CANONICAL_SEED, 3])
def test_other_correct_solutions_pass(task_id: str, seed: int) -> None:
    """The checkers judge the outcome, not the reference's wording or code."""
    instance = load(task_id).build(seed)
    for name, solution in _alternatives(task_id, instance).items():
        rejection = verdict(task_id, instance, solution)
        assert rejection is None, f"{name} was rejected: {rejection}"


@pytest.mark.parametrize("seed", [CANONICAL_SEED, 1, 2, 3, 4, 5])
def test_task_04_expected_value_is_what_the_code_returns(seed: int) -> None:
    instance = load("task_04").build(seed)
    call = instance.expected["call"]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp))
        ws.populate(instance.files)
        script = (f"import sys; sys.path.insert(0, '.'); from {instance.expected['package']}.api import checkout; "
                  f"print(checkout({call['items']!r}, {call['region']!r}, mode={call['mode']!r}))")
        out = run_bounded(ws, [sys.executable, "-c", script], 30.0)
    assert out.split("\n")[0].strip() == str(instance.expected["value"]), out


@pytest.mark.parametrize("seed", [CANONICAL_SEED, 1, 2])
def test_task_01_and_05_workspaces_fail_before_the_fix(seed: int) -> None:
    """The bug is real: the untouched workspace does not pass its own check."""
    for task_id in ("task_01", "task_05"):
        instance = load(task_id).build(seed)
        assert verdict(task_id, instance, [ToolCall("fs_list", {"path": "."}), Final("Fixed.")]) is not None


@pytest.mark.parametrize(("line", "found"), [
    ("up", ["up"]),
    ("Up (every started hour is charged in full)", ["up"]),
    ("rounded up", ["up"]),
    ("nearest", ["nearest"]),
    ("nearest, half-up", ["half-up"]),
    ("half even", ["half-even"]),
    ("HALF_DOWN", ["half-down"]),
    ("nearest or up", ["nearest", "up"]),
    ("up, not nearest", ["up", "nearest"]),  # no word is read: two rules on the line
    ("down", ["down"]),
    ("ceiling (every started hour)", []),  # not a word of the set
    ("a follow-up: the roundup, uptime and nearest-neighbour are no rules", []),
])
def test_task_06_reads_the_rules_a_line_names(line: str, found: list[str]) -> None:
    assert load("task_06").rules(line) == found
