"""The agentic-core-v1 task modules, proven without a model.

A small scripted driver plays each task's reference solution and near-misses
against the task's own tools and checker: every reference must pass, every
near-miss must be rejected with an AssertionError, for the canonical seed and
for many others; instances must vary with the seed and the canonical one must
not drift.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentic import CANONICAL_SEED, Final, RunResult, TaskInstance, ToolCall, ToolCallLog
from pytest_agentic.task import TaskSpec
from pytest_agentic.tools import TOOLS, ToolError, Workspace

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

#: The content hash of each canonical (seed 0) instance. A change here is a change
#: of the benchmark: bump it on purpose, never to make this test pass.
PINNED = {
    "task_01": None,
    "task_02": None,
    "task_03": None,
    "task_04": None,
    "task_05": None,
    "task_06": None,
    "task_10": None,
}

#: Checkers that run subprocesses get fewer random seeds, to keep this file quick.
SLOW = {"task_01", "task_02", "task_05", "task_06"}

_modules: dict[str, ModuleType] = {}


def load(task_id: str) -> ModuleType:
    if task_id not in _modules:
        stem = TASKS[task_id][0]
        spec = importlib.util.spec_from_file_location(f"_agentic_task_{task_id}", TASKS_DIR / f"{stem}.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        _modules[task_id] = module
    return _modules[task_id]


# --------------------------------------------------------------------------- the driver


def play(instance: TaskInstance, solution, root: Path) -> RunResult:
    """Run a scripted solution against a fresh workspace, as the agent loop would."""
    ws = Workspace(root)
    ws.populate(instance.files)
    calls: list[ToolCallLog] = []
    final: str | None = None
    turn = 0
    for step in solution:
        turn += 1
        if isinstance(step, Final):
            final = step.content
            break
        batch = [step] if isinstance(step, ToolCall) else list(step)
        for i, call in enumerate(batch):
            assert call.name in instance.tools, f"script calls {call.name}, which the task does not offer"
            args = json.loads(call.arguments_json())
            try:
                result, ok = TOOLS[call.name].fn(ws, args), True
            except ToolError as exc:
                result, ok = str(exc), False
            prev = calls[-1] if calls else None
            calls.append(
                ToolCallLog(
                    turn=turn, id=f"call_{turn}_{i}", name=call.name, raw_arguments=call.arguments_json(),
                    arguments=args, result=result, ok=ok, hallucinated=None,
                    redundant=bool(prev and prev["name"] == call.name and prev["arguments"] == args
                                   and prev["result"] == result),
                    duration_s=0.0,
                )
            )
    return RunResult(
        final_answer=final,
        stop_reason="final_answer" if final is not None else "max_turns",
        tool_calls=calls,
        turns=turn,
        workspace=ws.root,
    )


def verdict(task_id: str, instance: TaskInstance, solution) -> str | None:
    """None when the checker accepts the solution, else its rejection message."""
    with tempfile.TemporaryDirectory(prefix=f"{task_id}-") as tmp:
        run = play(instance, solution, Path(tmp) / "ws")
        try:
            load(task_id).check(instance, run)
        except AssertionError as exc:
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
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
