"""Every shipped task is solvable (reference passes) and strict (near-misses fail as wrong_answer)."""

from __future__ import annotations

import pytest

from pytest_agentic.run.failures import classify
from pytest_agentic.run.records import FailureMode
from pytest_agentic.run.task import CANONICAL_SEED

from .helpers import ROOT, load_task_module, play

MODULES = sorted((ROOT / "tasks").glob("test_task_*.py"))


load = load_task_module


def task_of(module):
    tests = [getattr(module, n) for n in dir(module) if n.startswith("test_")]
    assert len(tests) == 1, f"{module.__name__}: expected one task test, found {len(tests)}"
    marks = getattr(tests[0], "pytestmark", [])
    spec = next(m.args[0] for m in marks if m.name == "agentic_task")
    return spec


@pytest.fixture(params=MODULES, ids=lambda p: p.stem.replace("test_", ""))
def task_module(request):
    return load(request.param)


def test_reference_passes(task_module, tmp_path):
    spec = task_of(task_module)
    instance = spec.build(CANONICAL_SEED)
    run = play(instance, instance.reference, tmp_path / "ws")
    assert run.stop_reason == "final_answer", run.stop_reason
    task_module.check(instance, run)


def test_near_misses_fail_as_wrong_answer(task_module, tmp_path):
    spec = task_of(task_module)
    instance = spec.build(CANONICAL_SEED)
    assert instance.near_misses, f"{spec.id} has no near-miss solution"
    for name, solution in instance.near_misses.items():
        run = play(instance, solution, tmp_path / name)
        with pytest.raises(AssertionError):
            task_module.check(instance, run)
        assert classify(run, passed=False) is FailureMode.WRONG_ANSWER, name


def test_every_task_declares_itself(task_module):
    spec = task_of(task_module)
    assert spec.id in task_module.__file__
    assert spec.description, f"{spec.id}: the test needs a docstring saying what it measures"
    assert task_module.__doc__ and spec.name in task_module.__doc__
