"""The answer-line reader (run/answerlines.py): tolerant of markup, strict on content (revision 5: a judged line
holds its value alone); and issue 18's examples, restated."""

from __future__ import annotations

import re

import pytest

from pytest_agentic import Final, ToolCall
from pytest_agentic.run import answerlines
from pytest_agentic.run.failures import classify
from pytest_agentic.run.records import FailureMode

from .test_answer_corpus import instance, judged, steps


#: A port as task_08 lets its line write it (``port 8288``, ``8288/tcp``).
_PORT = rf"(?:(?:tcp\s*)?port\s*[:#=]?\s*)?{answerlines.INTEGER}(?:\s*/\s*tcp)?"
#: Cents as task_04 lets its line write them.
_CENTS = rf"{answerlines.INTEGER}(?:\s*(?:cents?|\u00a2))?"


def _int(text: str) -> int:
    return answerlines.integer(text, "answer", "ANSWER:", _PORT)


@pytest.mark.parametrize("text", [
    "ANSWER: 8288",
    "answer:8288",
    "Answer :  8288.",
    "**ANSWER:** 8288",
    "**ANSWER: 8288**",
    "`ANSWER: 8288`",
    "ANSWER: `8288`",
    "_Answer_: *8288*",
    "- ANSWER: 8288",
    "> ANSWER: 8288",
    "> - **Answer:** `8,288`",
    "1. ANSWER: 8288",
    "### Answer: 8288",
    "ANSWER: port 8288",
    "ANSWER: 8288/tcp",
    "ANSWER: \u201c8288\u201d",
    "ANSWER: <b>8288</b>",
    "ANSWER: $\\boxed{8288}$",
    "ANSWER = 8288",
    "ANSWER - 8288",
    "ANSWER -- 8288",
    "ANSWER \u2014 8288",
    "ANSWER \u2013 8288",
    "ANSWER\uff1a8288",
    "**ANSWER** - `8288`",
    "ANSWER=8288",
    "Port 8693 is the backup's and 9001 the default's.\n\nANSWER: 8288",
    "<think>ANSWER: 8693? no...</think>\nIt is the v2 file.\nANSWER: 8288",
    "```\nANSWER: 8288\n```",
    "ANSWER: 8288\n\nLet me know if you need the other services' ports too.",
    "ANSWER: 8288\nANSWER: 8288",
    "ANSWER: 8288 \u2705",  # a symbol is no word
    "ANSWER: 8288\n\n(Let me know if you need more.)",  # a blank line between: free text
])
def test_a_line_is_read_whatever_its_form(text):
    assert _int(text) == 8288


@pytest.mark.parametrize("text", [
    # a note on the line, whatever it says (issue 33, cases 1-3: the other candidate in words)
    "ANSWER: 8288 (from config/v2/ledger.yaml)",
    "ANSWER: 8288 [config/v2/ledger.yaml]",
    "ANSWER: 8288 \u2014 read from config/v2/ledger.yaml",
    "- ANSWER - 8288 (from config/v2/ledger.yaml)",
    "ANSWER: 8288 (eighty-eighty if the legacy file is still live)",
    "ANSWER: 8288 (or 8693 on hosts not yet migrated)",
    "ANSWER: 8288 (not 8693: that is the backup)",
    "ANSWER: 8288 \u2014 8693 is the backup's",
    "ANSWER - 8288 [8693 on old hosts]",
    "ANSWER: 8288 -- as asked",
    "ANSWER: 8288\nANSWER: 8288 (same as above)",
    # after "or", or any words beyond the value's form
    "ANSWER: 8288 or eighty-eighty",
    "ANSWER: 8288 or the legacy port",
    "ANSWER: 8288 from the v2 file",
    "ANSWER: 8288, probably",
    "ANSWER: 8288 \u516b\u5343",  # words in another script
    # a note alone in brackets right under the line, a footnote the value points to
    "ANSWER: 8288\n(or the legacy one)",
    "ANSWER: 8288\n[as asked]",
    "ANSWER: 8288[^1]\n\n[^1]: eighty-eighty on old hosts",
    "ANSWER: 8288 [^note]\n\n[^note]: as read from the v2 file",
])
def test_a_note_or_other_words_put_the_line_out_of_form(text):
    with pytest.raises(AssertionError) as info:
        _int(text)
    assert answerlines.is_format_failure(f"AssertionError: {info.value}"), info.value


@pytest.mark.parametrize(("text", "value"), [
    ("VALUE: 1,790", 1790), ("VALUE: 1790 cents", 1790), ("VALUE: 1\u202f790 cents", 1790),
    ("VALUE: 1790.", 1790), ("value : **1,790** cents", 1790),
])
def test_numbers_are_read_with_grouping_and_units(text, value):
    assert answerlines.integer(text, "value", "VALUE:", _CENTS) == value
    with pytest.raises(AssertionError, match="answer_format"):  # a unit the form does not name is a word
        answerlines.integer(text + " (\u00a317.90)", "value", "VALUE:", _CENTS)


@pytest.mark.parametrize("text", [
    "ANSWER: 8288 or 8693",
    "ANSWER: 8288, 8693",
    "ANSWER: 8288 or maybe 8693",  # a second candidate in the value itself stays a hedge
    "ANSWER: port 8288 / port 8693",
    "ANSWER: 8288\n\nANSWER: 8693",
    "**Answer:** 8288\n...\n- answer: 8693",
])
def test_two_candidates_are_a_hedge(text):
    with pytest.raises(AssertionError) as info:
        _int(text)
    assert "hedge" in str(info.value)
    assert not answerlines.is_format_failure(f"AssertionError: {info.value}")


@pytest.mark.parametrize("separator", [":", " :", " - ", " = ", "=", " \u2014 ", "-"])
@pytest.mark.parametrize("wrap", ["{label}{sep} 8288", "**{label}**{sep} 8288", "`{label}{sep} 8288`",
                                  "```\n{label}{sep} 8288\n```", "{label}{sep} **8288**."])
def test_the_separator_may_be_a_colon_a_dash_or_an_equals_sign(separator, wrap):
    assert set(answerlines.SEPARATORS) == {":", "-", "="}
    assert _int(wrap.format(label="ANSWER", sep=separator)) == 8288


def _ids(value: str) -> list[str]:
    return re.findall(r"\bq-[0-9a-f]{4}\b", value.lower())


def _functions(value: str) -> list[str]:
    return re.findall(r"\b[\w/]+\.py:\w+", value.lower())


def _both(text: str) -> tuple:
    return answerlines.sheet(text, answerlines.Field("value", "VALUE:", answerlines.integers),
                             answerlines.Field("function", "FUNCTION:", _functions))


def test_a_sheet_reads_every_field_in_its_order():
    assert _both("FUNCTION: a/b.py:fee\nVALUE - 1,790 cents") == (1790, "a/b.py:fee")
    # a note on any line puts it out of form, even one that names no other candidate
    for text in ("VALUE: 1790 (cents)\nFUNCTION: a/b.py:fee", "VALUE: 1790\nFUNCTION: a/b.py:fee (via quote())",
                 "VALUE: 1790 (from a/b.py:fee)\nFUNCTION: a/b.py:fee"):
        with pytest.raises(AssertionError, match="answer_format"):
            _both(text)


@pytest.mark.parametrize("text", [
    "VALUE: 1790 a/c.py:fee\nFUNCTION: a/b.py:fee",  # another field's candidate on a line
    "VALUE: 1790\nFUNCTION: a/b.py:fee 2100",
    "VALUE: 1790\nFUNCTION: a/b.py:fee or a/c.py:fee",
])
def test_a_second_candidate_of_any_field_on_any_judged_line_is_a_hedge(text):
    with pytest.raises(AssertionError) as info:
        _both(text)
    assert "hedge" in str(info.value) and not answerlines.is_format_failure(f"AssertionError: {info.value}")


def test_an_optional_field_may_be_left_out_but_not_named():
    optional = answerlines.Field("function", "FUNCTION:", _functions, required=False)
    value = answerlines.Field("value", "VALUE:", answerlines.integers)
    assert answerlines.sheet("VALUE: 1790", value, optional) == (1790, None)
    with pytest.raises(AssertionError, match="hedge"):
        answerlines.sheet("VALUE: 1790 a/b.py:fee", value, optional)
    with pytest.raises(AssertionError, match="answer_format"):
        answerlines.sheet("FUNCTION: a/b.py:fee", value, optional)


def test_each_line_is_read_only_under_its_own_label():
    text = "Done.\n\nASSUMPTION: round up (ceiling). QUESTION: or did you mean the nearest hour?"
    (assumption,) = answerlines.find(text, "assumption", ["question"])
    (question,) = answerlines.find(text, "question", ["assumption"])
    assert (assumption.value, question.value) == ("round up", "or did you mean the nearest hour?")
    # without the other labels the line reads on to its end, as any line does
    assert "nearest" in answerlines.find(text, "assumption")[0].text
    # a sheet cuts at the other fields' labels by itself
    missing = answerlines.Field("missing", "MISSING:", lambda v: re.findall(r"\b\w+\.\w+\b", v))
    query = answerlines.Field("query", "QUERY:", _ids)
    assert answerlines.sheet("QUERY: q-1a2b MISSING - orders.billed_cents", query, missing) == (
        "q-1a2b", "orders.billed_cents")


@pytest.mark.parametrize("text", [
    "The service listens on port 8288.",
    "Final answer: 8288",  # another label
    "ANSWER: see above",
    "ANSWER:",
    "The answer: 8288 is in config/v2.",  # a label is at the start of its line
    "Answer-wise, I think it is 8288.",  # a dash joined to a word is no separator
    "<think>\nANSWER: 8288\n</think>\nThe port is in the v2 file.",  # only in the reasoning
])
def test_no_readable_line_is_a_format_failure(text):
    with pytest.raises(AssertionError) as info:
        _int(text)
    assert answerlines.is_format_failure(f"AssertionError: {info.value}"), info.value


def test_the_tag_is_counted_apart_in_the_histogram_and_noted():
    from pytest_agentic.campaign.tables import failure_mode_histogram

    from .records import record

    runs = [record("task_08", 1, False), record("task_08", 2, False), record("task_08", 3, True)]
    runs[0]["tags"] = {"answer_format": True}
    rows = {r["failure_mode"]: r for r in failure_mode_histogram(runs)}
    assert (rows["wrong_answer"]["count"], rows["wrong_answer"]["answer_format"]) == (2, 1)
    assert "1 of 3 runs gave no readable answer line" in answerlines.note(runs[0]["model"], runs)


# --------------------------------------------------------------------------- issue 18's examples

def _issue_06(seed: int, line: str | None = None) -> str:
    """The terse, correct task_06 answer of issue 18, restated with revision 3's answer line (or ``line``)."""
    inst = instance("06", seed)
    ticket = inst.files["TICKET.md"]
    owner, finance = re.findall(r"^\*\*(\w+) \(", ticket, re.MULTILINE)
    big, factor = {"to_gigabytes": ("GB", "1000 MB"), "to_hours": ("hour", "60 min"),
                   "to_minutes": ("minute", "60 s"), "to_kilograms": ("kg", "1000 g")}[inst.expected["function"]]
    fn, arg = inst.expected["function"], re.search(r"def \w+\((\w+)", inst.files[inst.expected["module"]])[1]
    line = line or (f"ASSUMPTION: the ticket conflicts ({owner}: round to nearest; {finance}/tariff: every started "
                    f"{big} is charged in full). I went with the tariff \u2014 round UP \u2014 and {factor} = 1 {big} "
                    "(as the tests use).")
    return (f"- `{fn}` now returns `-(-{arg} // {factor.split()[0]})` (ceiling).\n"
            f"- Tests pass. If product really wants nearest rounding, it's a one-line change.\n\n{line}")


@pytest.mark.parametrize("seed", [11, 12])
def test_the_task_06_answers_of_issue_18_restated_for_revision_5(seed):
    """Revision 5's closed form: the line names the one rule implemented, and nothing else. Issue 18's line
    carries notes and is out of form; the same answer with its rule alone on the line passes."""
    inst = instance("06", seed)
    module, fn = inst.expected["module"], inst.expected["function"]
    arg = re.search(r"def \w+\((\w+)", inst.files[module])[1]
    size = {"to_gigabytes": 1000, "to_kilograms": 1000, "to_hours": 60, "to_minutes": 60}[fn]
    source = inst.files[module].replace("    raise NotImplementedError\n", f"    return -(-{arg} // {size})\n")
    solution = [ToolCall("fs_read", {"path": "TICKET.md"}), ToolCall("fs_read", {"path": module}),
                ToolCall("fs_write", {"path": module, "content": source}), ToolCall("run_tests", {"path": "."})]
    why = judged("06", seed, [*solution, Final(_issue_06(seed))])
    assert why is not None and answerlines.is_format_failure(why), why
    why = judged("06", seed, [*solution, Final(_issue_06(seed, "ASSUMPTION: up (the tariff)"))])
    assert why is not None and answerlines.is_format_failure(why), why
    assert judged("06", seed, [*solution, Final(_issue_06(seed, "ASSUMPTION: up"))]) is None


def test_the_task_08_hedge_of_issue_18_fails():
    inst = instance("08", 13)
    port, (stale, _) = inst.expected["port"], inst.expected["wrong_ports"]
    service = inst.expected["new_path"].rsplit("/", 1)[1][:-5]
    prose = (f"So the {service} service listens on TCP port {port}. If a host hasn't picked up the v2 migration "
             f"yet, it would still use the pre-migration setting from `config/{service}.yaml.bak`, port {stale}, "
             f"so check both {port} and {stale} on such hosts.\n\n")
    for lines in (f"ANSWER: {port} or {stale}", f"ANSWER: {port}\nANSWER: {stale}"):
        why = judged("08", 13, [*steps(inst), Final(prose + lines)])
        assert why is not None and "hedge" in why, (lines, why)
    for lines in (f"ANSWER: {port} (check both {port} and {stale} on hosts without the v2 migration)",
                  f"ANSWER: {port}\nANSWER: {port} (hosts migrated)"):  # revision 5: a note is out of form
        why = judged("08", 13, [*steps(inst), Final(prose + lines)])
        assert why is not None and answerlines.is_format_failure(why), (lines, why)
    # the same prose with one port on its line is the right answer: the prose is free
    assert judged("08", 13, [*steps(inst), Final(prose + f"ANSWER: {port}")]) is None


def test_a_right_value_in_prose_without_its_line_is_tagged_answer_format(tmp_path):
    from .helpers import load_task_module, play
    from .test_answer_corpus import MODULES

    inst = instance("08", 0)
    run = play(inst, [*steps(inst), Final(f"It listens on port {inst.expected['port']}.")], tmp_path / "ws")
    with pytest.raises(AssertionError) as info:
        load_task_module(MODULES["08"]).check(inst, run)
    assert answerlines.is_format_failure(f"AssertionError: {info.value}")
    assert classify(run, passed=False) is FailureMode.WRONG_ANSWER
