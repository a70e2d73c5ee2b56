"""task_02's behaviour rule covers every input, not only lists of full rows (an independent player's finds).

The prompt asks the three functions to keep their behaviour "exactly as it is now for every input". Two
refactors that the checker accepted change it:

- seed 77: the shared helper reads ``row["amount"]`` before its skip check, so a row the original skips
  without reading its amount (a draft refund given without one) now raises KeyError;
- seed 76: the shared helper iterates its argument twice (a ``sum`` over it, then a comprehension), so a
  one-pass iterable such as a generator loses every row line while the TOTAL stays.

The checker now also calls each function with the rows the original skips stripped to the keys it reads of
them, and with a one-pass iterator of every held-out input (``probe.OnePass``). Each case below fails without
that and passes with it; the siblings at seeds 0, 7 and 8 are the reference refactor with the same one change.
"""

from __future__ import annotations

import pytest

from pytest_agentic import Final, ToolCall
from pytest_agentic.run import probe
from pytest_agentic.run.failures import classify
from pytest_agentic.run.records import FailureMode

from .helpers import ROOT, load_task_module, play

TASK = ROOT / "tasks" / "test_task_02_refactor_duplicated_code.py"

#: The player's refactor at seed 77 (exports.py, whole new content).
READS_FIRST_77 = '''"""Plain-text reports for the month-end pack."""


def _report(title, rows, skip):
    """Shared body: one line per row that `skip` does not reject, then the total."""
    lines = [title]
    total = 0
    for row in rows:
        amount = row["amount"]
        if skip(row["status"], amount):
            continue
        total += amount
        lines.append(f"{row['id']:<12}{amount:>13.2f}")
    lines.append(f"{'TOTAL':<12}{total:>13.2f}")
    return "\\n".join(lines)


def shipments_report(shipments):
    """Plain-text shipments report: one line per shipment that is not rejected, then the total."""
    return _report("SHIPMENTS", shipments, lambda status, amount: status == "rejected")


def refunds_report(refunds):
    """Plain-text refunds report: one line per refund that is not draft, then the total."""
    return _report("REFUNDS", refunds, lambda status, amount: status == "draft")


def rentals_report(rentals):
    """Plain-text rentals report: one line per rental that is not expired, then the total."""
    return _report("RENTALS", rentals, lambda status, amount: status == "expired" or amount == 0)
'''

#: The player's refactor at seed 76 (reports.py, whole new content).
TWO_PASSES_76 = '''"""Plain-text reports for the month-end pack."""


def _report(title, rows, excluded_status, decimals):
    """Shared body: one line per row whose status is not ``excluded_status``, then the total."""
    total = sum(row["amount"] for row in rows if row["status"] != excluded_status)
    lines = [title]
    lines += [
        f"{row['id']:<12}{row['amount']:>10.{decimals}f}"
        for row in rows
        if row["status"] != excluded_status
    ]
    lines.append(f"{'TOTAL':<12}{total:>10.{decimals}f}")
    return "\\n".join(lines)


def orders_report(orders):
    """Plain-text orders report: one line per order that is not draft, then the total."""
    return _report("ORDERS", orders, "draft", 2)


def invoices_report(invoices):
    """Plain-text invoices report: one line per invoice that is not cancelled, then the total."""
    return _report("INVOICES", invoices, "cancelled", 0)


def shipments_report(shipments):
    """Plain-text shipments report: one line per shipment that is not expired, then the total."""
    return _report("SHIPMENTS", shipments, "expired", 2)
'''


def _reference(inst) -> str:
    return next(c.arguments["content"] for c in inst.reference
                if isinstance(c, ToolCall) and c.name == "fs_write")


def _reads_first(inst) -> str:
    """The reference refactor, its helper reading the amount before the skip check."""
    code = _reference(inst)
    lines = code.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("        amount = "))
    skip = next(i for i, line in enumerate(lines) if line.startswith("        if ") and i < at)
    assert lines[skip + 1].strip() == "continue", code
    moved = lines[:skip] + [lines[at]] + lines[skip:at] + lines[at + 1:]
    return "\n".join(moved)


def _two_passes(inst) -> str:
    """The reference refactor, its helper counting the rows (a first pass over them) before the loop."""
    code = _reference(inst)
    old = "    lines = [title]\n"
    assert code.count(old) == 1, code
    return code.replace(old, "    count = sum(1 for _ in rows)\n    lines = [title][:count + 1]\n")


CASES = {
    (77, "reads_amount_before_skip"): lambda inst: READS_FIRST_77,
    (76, "iterates_twice"): lambda inst: TWO_PASSES_76,
    **{(seed, "reads_amount_before_skip"): _reads_first for seed in (0, 7, 8)},
    **{(seed, "iterates_twice"): _two_passes for seed in (0, 7, 8)},
}
#: What each change breaks, as the checker's message says it.
WHY = {"reads_amount_before_skip": "raised KeyError: 'amount'", "iterates_twice": "(iter(["}


@pytest.mark.parametrize(("seed", "name"), list(CASES), ids=[f"{s}-{n}" for s, n in CASES])
def test_a_refactor_that_changes_behaviour_on_some_input_fails(seed, name, tmp_path):
    module = load_task_module(TASK)
    inst = module.build(seed)
    code = CASES[seed, name](inst)
    # the visible tests pass, and the held-out lists of full rows give the outputs of old
    namespace: dict = {}
    exec(compile(code, inst.expected["module"], "exec"), namespace)
    for fn, wants in inst.expected["outputs"].items():
        assert [namespace[fn](rows) for rows in inst.expected["inputs"]] == wants
    solution = [ToolCall("fs_write", {"path": inst.expected["module"], "content": code}),
                ToolCall("run_tests", {"path": "."}), Final("Refactored; behaviour unchanged, the tests pass.")]
    run = play(inst, solution, tmp_path / "ws")
    tests = run.tool_calls[-1]["result"]
    assert "passed" in tests and "failed" not in tests, tests
    with pytest.raises(AssertionError, match="behaviour changed") as caught:
        module.check(inst, run)
    assert WHY[name] in str(caught.value), str(caught.value)
    assert classify(run, passed=False) is FailureMode.WRONG_ANSWER


@pytest.mark.parametrize("seed", range(8))  # every quirk, twice
def test_the_held_out_calls_cover_skipped_rows_and_one_pass_iterators(seed):
    """Per function, a call with the rows it skips stripped to what it reads of them; and every call once
    more with a one-pass iterator, the original giving the same on it (it iterates once, for every quirk)."""
    module = load_task_module(TASK)
    inst = module.build(seed)
    exp = inst.expected
    cases = module._held_out(exp, inst.files[exp["module"]])
    lists = [c for c in cases if not isinstance(c[1], probe.OnePass)]
    once = [c for c in cases if isinstance(c[1], probe.OnePass)]
    assert [(n, c.items, w) for n, c, w, _ in once] == [(n, r, w) for n, r, w, _ in lists]
    stripped = [c for c in lists if not c[3]]
    assert sorted(n for n, *_ in stripped) == sorted(exp["functions"])
    for name, rows, _, _ in stripped:
        short = [r for r in rows if set(r) != {"id", "amount", "status"}]
        assert short and any(set(r) <= {"id", "status"} for r in short), (name, rows)
