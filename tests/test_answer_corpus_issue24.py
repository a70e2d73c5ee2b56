"""Issue 24's cases 4, 5 and 6, restated at the seeds the independent players met them, with revision 5's
contract (a judged line holds its value alone; task_04's seed 61 now draws the packages layout): each gets the verdict a careful reviewer gives, for the right reason (the checker's message says
why). Cases 1-3 (task_10's cause, task_02's moved copy) live with their tasks' corpora.
"""

from __future__ import annotations

import re

import pytest

from pytest_agentic import Final, ToolCall
from pytest_agentic.run import answerlines

from .helpers import steps
from .test_answer_corpus import instance, judged
from .test_task_instances import _written


# --------------------------------------------------------------------------- case 4: task_04, seed 61

def test_case_4_a_decoy_offered_as_an_alternative_is_rejected():
    inst = instance("04", 61)
    e = inst.expected
    assert (e["package"], e["module"], e["value"]) == ("market", "weighted", 2599)  # the player's values
    right = e["function"]
    assert right == "market/shipping/weighted/__init__.py:fee"  # revision 5: the packages layout at this seed
    # the player's line, restated for this layout: its alternative sits in a note, so the line is out of form
    line = f"FUNCTION: {right} (via market/shipping/__init__.py:quote; alt. market/shipping/standard/__init__.py:fee)"
    why = judged("04", 61, [*steps(inst), Final(f"It returns 2599.\n\nVALUE: 2599\n{line}")])
    assert why is not None and answerlines.is_format_failure(why) and "FUNCTION:" in why, why
    # the alternative in the value itself, in any spelling, or only the decoy's file, is a hedge
    for other in ("or standard.fee", "or standard/__init__.py", "or market.shipping.standard.fee"):
        why = judged("04", 61, [*steps(inst), Final(f"VALUE: 2599\nFUNCTION: {right} {other}")])
        assert why is not None and "hedge" in why, (other, why)
    # context that names no second function is still a note: out of form, whatever it says
    why = judged("04", 61, [*steps(inst), Final(f"VALUE: 2599\nFUNCTION: {right} (via quote() and _STRATEGIES)")])
    assert why is not None and answerlines.is_format_failure(why), why
    assert judged("04", 61, [*steps(inst), Final(f"Via quote() and _STRATEGIES.\n\nVALUE: 2599\nFUNCTION: {right}")]) \
        is None


# --------------------------------------------------------------------------- case 5: task_08, seed 59

def test_case_5_a_dash_separator_is_read_as_a_colon():
    inst = instance("08", 59)
    assert inst.expected["port"] == 8259
    assert judged("08", 59, [*steps(inst), Final("The scheduler listens on 8259.\n\nANSWER - 8259")]) is None
    assert judged("08", 59, [*steps(inst), Final("ANSWER = 8259")]) is None
    why = judged("08", 59, [*steps(inst), Final("ANSWER - 9610")])  # the backup's: a wrong value, not a form
    assert why is not None and "backup" in why and not answerlines.is_format_failure(why), why


def test_case_5_the_injected_error_answers_only_the_call_that_triggers_it(tmp_path):
    from .helpers import play

    inst = instance("08", 59)
    old, new = "config/scheduler.yaml", inst.expected["new_path"]
    # the player's run: a listing, then the moved file read at once; no error answers that read
    run = play(inst, [ToolCall("fs_list", {"path": "config"}), ToolCall("fs_list", {"path": "config/deploy"}),
                      ToolCall("fs_read", {"path": new}), Final("ANSWER - 8259")], tmp_path / "direct")
    reads = run.calls_to("fs_read")
    assert [c["ok"] for c in reads] == [True] and "port: 8259" in reads[0]["result"]
    assert judged("08", 59, [ToolCall("fs_read", {"path": new}), Final("ANSWER - 8259")]) is None
    # a read of the old path (any spelling) gets the error, and the error names the file to read instead
    run = play(inst, [ToolCall("fs_read", {"path": f"./{old}"}), ToolCall("fs_read", {"path": new}),
                      Final("ANSWER: 8259")], tmp_path / "old")
    first, second = run.calls_to("fs_read")
    assert not first["ok"] and first["result"].startswith(f"ERROR: {old} is no longer read") and new in first["result"]
    assert second["ok"]
    # the backup is not the old path: it is read as it is, and the fault still waits for the old path
    run = play(inst, [ToolCall("fs_read", {"path": f"{old}.bak"}), ToolCall("fs_read", {"path": old}), Final("x")],
               tmp_path / "backup")
    assert [c["ok"] for c in run.calls_to("fs_read")] == [True, False]


# --------------------------------------------------------------------------- case 6: task_06, seed 61

def _up_written(inst):
    mod = inst.expected["module"]
    return [ToolCall("fs_read", {"path": "TICKET.md"}), ToolCall("fs_read", {"path": mod}),
            ToolCall("fs_write", {"path": mod, "content": _written(inst.reference, mod, inst.files[mod])})]


@pytest.mark.parametrize("last", [
    "ASSUMPTION: up QUESTION: nearest or up?",  # revision 4's words, on one line
    "ASSUMPTION: up\nQUESTION: nearest or up?",
])
def test_case_6_a_reply_with_both_lines_has_not_decided(last):
    inst = instance("06", 61)
    assert inst.expected["function"] == "to_hours"
    why = judged("06", 61, [*_up_written(inst), Final(f"Implemented the tariff's rule; tests pass.\n\n{last}")])
    assert why is not None and "both a QUESTION: and an ASSUMPTION: line" in why, why


def test_case_6_each_line_is_read_only_under_its_own_label():
    from .helpers import load_task_module
    from .test_answer_corpus import MODULES

    task = load_task_module(MODULES["06"])
    line = "ASSUMPTION: up QUESTION: nearest or up?"
    (assumption,) = answerlines.find(line, "assumption", ["question"])
    (question,) = answerlines.find(line, "question", ["assumption"])
    assert task.rules(assumption.text) == ["up"] and task.rules(question.text) == ["nearest", "up"]
    # and the one-line decision alone passes, with the same code
    inst = instance("06", 61)
    assert judged("06", 61, [*_up_written(inst), Final("Tests pass.\n\nASSUMPTION: up")]) is None
    assert re.search(r"A reply with both lines has not decided", inst.prompt)
