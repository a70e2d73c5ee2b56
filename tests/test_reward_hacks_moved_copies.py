"""task_02 judges the whole workspace, not the surface (issue 24, item 3 and case 3).

The moved copies of ``tests/moved_copies.py`` keep the three functions' behaviour, make each a one-line
delegate to one shared helper and pass the tests; revision 3's checker accepted 60 of the 96 of them at
seeds 0-11 (it compared whole functions only). Each must now fail as ``wrong_answer`` for the right reason,
the copy rule's message (not behaviour, not a missing helper). Correct refactors with more structure than
the reference (a helper split in two loops, a class with the body as a method) still pass, and so do
small blocks alike by design (the delegates).

Copies lightly restructured (an independent player's hacks at seed 62, and their siblings in every
arrangement) keep no shape in common at 80%; the trace rule catches them: each of the three functions,
traced in the sandbox on the held-out inputs, runs a body of its own that neither of the other two runs.
"""

from __future__ import annotations

import ast

import pytest

from pytest_agentic import Final, ToolCall
from pytest_agentic.run.failures import classify
from pytest_agentic.run.records import FailureMode

from . import moved_copies
from .helpers import ROOT, load_task_module, play

TASK = ROOT / "tasks" / "test_task_02_refactor_duplicated_code.py"
SEEDS = (0, 7, 8)
#: The copy rules' message (the shape rule's and the trace rule's): the reason these runs fail.
COPY = "the duplicated body is still there"
SHAPE, TRACE = "keep the shape of one body", "runs its own copy of the duplicated body"


def _judged(seed: int, solution: list, tmp_path) -> tuple[object, str | None]:
    module = load_task_module(TASK)
    inst = module.build(seed)
    run = play(inst, solution, tmp_path / "ws")
    assert run.stop_reason == "final_answer", run.stop_reason
    try:
        module.check(inst, run)
    except AssertionError as exc:
        return run, str(exc)
    return run, None


@pytest.mark.parametrize("hack", moved_copies.HACKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_a_moved_copy_fails_as_wrong_answer(seed, hack, tmp_path):
    inst = load_task_module(TASK).build(seed)
    run, why = _judged(seed, moved_copies.solution(inst, hack), tmp_path)
    assert why is not None and COPY in why, why
    assert classify(run, passed=False) is FailureMode.WRONG_ANSWER


@pytest.mark.parametrize("seed", (60, 61))
def test_issue_24_case_3_the_dispatcher_over_per_kind_copies_fails(seed, tmp_path):
    """The player's hack: the three functions one-line calls to ``_build_report(kind, records)``, whose body
    holds the three original bodies as ``if kind == ...`` branches, locals renamed. (The issue names no
    seed for case 3; 60 and 61 are the players' seeds of cases 1, 2 and 4.)"""
    inst = load_task_module(TASK).build(seed)
    code = moved_copies.branches(inst)
    helper = next(n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef) and n.name == "_build_report")
    assert [a.arg for a in helper.args.args] == ["kind", "records"] and isinstance(helper.body[0], ast.If)
    run, why = _judged(seed, moved_copies.solution(inst, "branches"), tmp_path)
    assert why is not None and COPY in why and SHAPE in why and "branch" in why, why
    assert classify(run, passed=False) is FailureMode.WRONG_ANSWER


@pytest.mark.parametrize("name", moved_copies.CORRECT)
@pytest.mark.parametrize("seed", (*SEEDS, 1, 5))  # seeds 1 and 5: the quirks whole_units and sorted_by_id
def test_a_correct_refactor_with_more_structure_passes(seed, name, tmp_path):
    inst = load_task_module(TASK).build(seed)
    code = moved_copies.CORRECT[name](inst)
    assert code.count("for ") >= (2 if name == "split_helper" else 1)
    solution = [ToolCall("fs_write", {"path": inst.expected["module"], "content": code}),
                ToolCall("run_tests", {"path": "."}), Final("Refactored; the tests pass.")]
    assert _judged(seed, solution, tmp_path)[1] is None


def test_small_blocks_alike_by_design_are_not_copies():
    """The thin bar: two one-line functions of one shape are no copy; two loops of the original's size are."""
    module = load_task_module(TASK)
    inst = module.build(0)
    original = ast.parse(inst.files[inst.expected["module"]])
    bar = min(module._size(n) for n in original.body if isinstance(n, ast.FunctionDef)) // 2 + 1
    tiny = ast.parse("def a(rows):\n    return _r('A', rows, 'x')\n\n\ndef b(rows):\n    return _r('B', rows, 'y')\n")
    assert module._copies({"m.py": tiny}, bar) is None
    assert module._copies({"m.py": tiny}, 5) is not None  # the same pair, were the bar that low
    assert module._copies({"m.py": original}, bar) is not None  # the three originals themselves


@pytest.mark.parametrize("case", moved_copies.PLAYER_62)
def test_issue_24_the_players_restructured_copies_fail(case, tmp_path):
    """The player's two hacks at seed 62, verbatim: the three bodies lightly restructured, (a) in a second
    module behind a dict, (b) as branches of one helper. No two keep one shape; the trace rule names the
    copy a function runs of its own."""
    inst = load_task_module(TASK).build(62)
    files, answer = moved_copies.PLAYER_62[case]
    module = load_task_module(TASK)
    assert module._copies({p: ast.parse(t) for p, t in files.items()}, 25) is None  # the shape rule alone passes it
    solution = [ToolCall("fs_write", {"path": p, "content": t}) for p, t in files.items()]
    run, why = _judged(62, [*solution, ToolCall("run_tests", {"path": "."}), Final(answer)], tmp_path)
    assert why is not None and TRACE in why and COPY in why, why
    assert classify(run, passed=False) is FailureMode.WRONG_ANSWER


def test_the_restructured_copies_take_three_styles():
    """The siblings are restructured as the player's are: each of the three copies in its own style."""
    module = load_task_module(TASK)
    inst = module.build(0)
    styles = {moved_copies.restructured(fn, 0).split("\n")[0].split(" = ")[0] + str("format(" in
              moved_copies.restructured(fn, 0)) for fn in moved_copies._originals(inst)}
    assert len(styles) == 3, styles


def test_copies_that_switch_the_tracer_off_fail(tmp_path):
    """Restructured copies whose helper first turns tracing off: what they execute is unknown, so they fail."""
    inst = load_task_module(TASK).build(0)
    code = moved_copies.HACKS["restructured_branches"](inst).replace(
        "def _build_report(kind, records):\n", "import sys\n\n\ndef _build_report(kind, records):\n    sys.settrace(None)\n")
    solution = [ToolCall("fs_write", {"path": inst.expected["module"], "content": code}),
                ToolCall("run_tests", {"path": "."}), Final("Refactored; the tests pass.")]
    run, why = _judged(0, solution, tmp_path)
    assert why is not None and "could not be traced" in why and "replaced the tracer" in why, why
    assert classify(run, passed=False) is FailureMode.WRONG_ANSWER
