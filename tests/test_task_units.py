"""Every unit a checker's expected values rest on is stated in what the model is given (issue 33).

For each task and seeds 0-29, the conversion factors (and conventions) the checker uses are read
from the instance's checker data (``expected``: the values it compares against), never from the
text the task builds, and each must appear as a statement in the prompt or a workspace file: a
ticket that never says how many megabytes make a gigabyte fails here. A task whose checker uses no
convention says why in :data:`NO_UNITS`; a task in neither table fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from .helpers import ROOT, load_task_module

SEEDS = range(30)

#: A statement the instance must make: what it states, and a test on the instance's whole text.
Statement = tuple[str, Callable[[str], bool]]


def _has(pattern: str) -> Callable[[str], bool]:
    return lambda text: re.search(pattern, text, re.IGNORECASE) is not None


def _task_06(inst) -> list[Statement]:
    """The probes' expected values divide by one factor (halves are probed at half of it)."""
    factor = 2 * inst.expected["halves"][0]
    for rule, values in (("up", lambda v: -(-v // factor)), ("nearest", lambda v: (v + factor // 2) // factor)):
        pairs = inst.expected["probes"][rule]
        assert [want for _, want in pairs] == [values(v) for v, _ in pairs]
    return [(f"one larger unit is {factor} smaller ones",
             _has(rf"\b(?:one|1|an?)\s+[a-z]+\s+(?:is|=|equals|makes)\s+{factor}\s+[a-z]+"))]


def _task_01(inst) -> list[Statement]:
    """The held-out cases of the faulty function convert: amounts to cents, durations to seconds."""
    function, cases = inst.expected["function"], inst.expected["held_out"]
    code = inst.files[inst.expected["module"]]
    if function == "to_cents":
        (factor,) = {want // int(args[0]) for args, want in cases if args[0].isdigit() and int(args[0])}

        def example(text: str) -> bool:  # a docstring example that shows the factor: "12.34" ... (1234)
            return any(int(c) == int(a) * factor + int(b)
                       for a, b, c in re.findall(r'"(\d+)\.(\d\d)"[^()\n]*integer cents \((\d+)\)', text))
        return [(f"{factor} cents per unit", example)]
    if function == "parse_duration":
        single = {re.fullmatch(r"(\d+)([a-z])", args[0]): want for args, want in cases}
        factors = {m[2]: want // int(m[1]) for m, want in single.items() if m}
        assert set(factors) == {"h", "m", "s"}, factors
        return [(f"{unit} is {n} seconds", lambda text, u=unit, n=n: re.search(rf"[\"']{u}[\"']\s*:\s*{n}\b", code)
                 is not None) for unit, n in factors.items()]
    assert function == "chunk", function  # batching: counts of items, no unit
    return []


def _task_04(inst) -> list[Statement]:
    """The value is in cents; the economy decoy the checker rejects charges per started kilogram of grams."""
    return [("the value is in cents", _has(r"integer number of cents")),
            ("weights are in grams", _has(r"weights? in grams")),
            ("1000 grams per kilogram", _has(r"//\s*1000\b"))]


def _task_09(inst) -> list[Statement]:
    """The checker's window counts closes: fewer than 10 rows is fewer than the 10 the window needs."""
    assert inst.expected["count"] < 10
    return [("a 10-day window is 10 daily closes (rows), not calendar days",
             _has(r"N-day moving average is the mean of the last N daily closes"))]


UNITS: dict[str, Callable[..., list[Statement]]] = {
    "test_task_01_fix_failing_test": _task_01,
    "test_task_04_trace_through_codebase": _task_04,
    "test_task_06_handle_ambiguous_requirement": _task_06,
    "test_task_09_know_when_to_stop": _task_09,
}
#: Tasks whose checkers convert no unit and assume no convention, and why.
NO_UNITS = {
    "test_task_02_refactor_duplicated_code": "outputs are compared with the original code's own outputs",
    "test_task_03_investigate_log": "the answer is an event id",
    "test_task_05_minimal_fix": "the expected values follow the module's own rule (its other lines) and the bug report",
    "test_task_07_multi_step_plan": "the files' contents are given verbatim",
    "test_task_08_recover_from_tool_error": "the answer is a port read from a file",
    "test_task_10_sql_investigation": "the answer is a query id, a cause word and schema names",
}


def test_every_task_says_whether_its_checker_needs_a_stated_unit():
    stems = sorted(p.stem for p in (ROOT / "tasks").glob("test_task_*.py"))
    assert sorted([*UNITS, *NO_UNITS]) == stems


def _text(inst) -> str:
    files = [c if isinstance(c, str) else c.decode("utf-8", "replace") for c in inst.files.values()]
    return "\n".join([inst.prompt, *files])


@pytest.mark.parametrize("stem", sorted(UNITS))
def test_every_unit_the_checker_uses_is_stated_in_the_instance(stem):
    module = load_task_module(ROOT / "tasks" / f"{stem}.py")
    missing = []
    for seed in SEEDS:
        inst = module.build(seed)
        text = _text(inst)
        missing += [f"seed {seed}: {what}" for what, stated in UNITS[stem](inst) if not stated(text)]
    assert not missing, missing
