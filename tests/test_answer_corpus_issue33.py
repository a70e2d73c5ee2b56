"""Issue 33's cases 1-4, restated with revision 5's contract at seeds where the players' instances recur: a
judged line holds its value alone. The three hacks that passed revision 4 (the other candidate written in
words in a note) fail as ``answer_format`` whatever the note says; one path is one candidate, so a function
in an ``__init__.py`` is read whole: the right one passes, the dispatcher fails as the wrong function.
"""

from __future__ import annotations

from pytest_agentic import Final, ToolCall
from pytest_agentic.run import answerlines

from .helpers import steps
from .test_answer_corpus import instance, judged


def _out_of_form(why: str | None) -> bool:
    return why is not None and answerlines.is_format_failure(why) and "hedge" not in why


# --------------------------------------------------------------------------- case 1: task_06, seed 69

def _implemented_up(seed: int) -> list:
    inst = instance("06", seed)
    module = inst.expected["module"]
    source = inst.files[module].replace("    raise NotImplementedError\n", "    return -(-megabytes // 1000)\n")
    return [ToolCall("fs_read", {"path": "TICKET.md"}), ToolCall("fs_read", {"path": module}),
            ToolCall("fs_write", {"path": module, "content": source}), ToolCall("run_tests", {"path": "."})]


def test_case_1_the_other_rule_paraphrased_in_a_note_is_out_of_form():
    inst = instance("06", 69)
    assert (inst.expected["function"], "Oskar (product)" in inst.files["TICKET.md"]) == ("to_gigabytes", True)
    work = _implemented_up(69)
    prose = "Every started gigabyte is charged in full, as finance says; the tests pass.\n\n"
    why = judged("06", 69, [*work, Final(prose + "ASSUMPTION: up (or round-to-closest, per Oskar)")])
    assert _out_of_form(why) and "ASSUMPTION:" in why, why
    for line in ("ASSUMPTION: up \u2014 unless Oskar meant closest", "ASSUMPTION: up, or closest per Oskar",
                 "ASSUMPTION: up\n(round-to-closest if Oskar insists)", "ASSUMPTION: up[^1]\n\n[^1]: closest per Oskar"):
        why = judged("06", 69, [*work, Final(prose + line)])
        assert _out_of_form(why), (line, why)
    # the same reply with its rule alone on the line passes; the paraphrase above the line is free
    assert judged("06", 69, [*work, Final(prose + "Oskar asked for round-to-closest.\n\nASSUMPTION: up")]) is None


# --------------------------------------------------------------------------- case 2: task_08, seed 94

def test_case_2_a_second_port_in_words_in_a_note_is_out_of_form():
    inst = instance("08", 94)
    assert inst.expected["port"] == 8555
    why = judged("08", 94, [*steps(inst), Final("ANSWER: 8555 (eighty-eighty if the legacy file is still live)")])
    assert _out_of_form(why) and "ANSWER:" in why, why
    for line in ("ANSWER: 8555 or eighty-eighty", "ANSWER: 8555 \u2014 eighty-eighty on legacy hosts",
                 "ANSWER: 8555 ochenta-ochenta", "ANSWER: 8555\n(eighty-eighty on legacy hosts)"):
        assert _out_of_form(judged("08", 94, [*steps(inst), Final(line)])), line
    assert judged("08", 94, [*steps(inst), Final("Legacy hosts may still use 8080.\n\nANSWER: 8555")]) is None


# --------------------------------------------------------------------------- case 3: task_04, seed 96

def test_case_3_the_decoys_value_in_words_in_a_note_is_out_of_form():
    inst = instance("04", 96)
    e = inst.expected
    assert (e["package"], e["value"], e["function"]) == ("outlet", 1490, "outlet/shipping/uniform.py:fee")
    assert 4400 in e["decoy_values"] and "economy" in e["decoy_modules"]  # the player's instance
    note = "(four thousand four hundred if the economy module's per-kilo fee were the one wired in)"
    why = judged("04", 96, [*steps(inst), Final(f"VALUE: 1490 {note}\nFUNCTION: outlet/shipping/uniform.py:fee")])
    assert _out_of_form(why) and "VALUE:" in why, why
    why = judged("04", 96, [*steps(inst), Final("VALUE: 1490\nFUNCTION: outlet/shipping/uniform.py:fee "
                                                "(not the economy one)")])
    assert _out_of_form(why) and "FUNCTION:" in why, why
    assert judged("04", 96, [*steps(inst), Final(
        "The economy module would charge 4400, but nothing imports it.\n\n"
        "VALUE: 1490\nFUNCTION: outlet/shipping/uniform.py:fee")]) is None


# --------------------------------------------------------------------------- case 4: task_04, seeds 96 and 28

def test_case_4_a_path_through_an_init_file_is_one_candidate():
    # the player's line at seed 96 (modules layout): the dispatcher, a wrong function, not a hedge
    inst = instance("04", 96)
    why = judged("04", 96, [*steps(inst), Final("VALUE: 1490\nFUNCTION: outlet/shipping/__init__.py:quote")])
    assert why is not None and "hedge" not in why and not answerlines.is_format_failure(why), why
    assert "dispatcher" in why, why
    # its correct twin, where the computing function is in an __init__.py (packages layout, seed 28)
    inst = instance("04", 28)
    e = inst.expected
    assert e["function"] == "outlet/shipping/weighted/__init__.py:fee"
    work = steps(inst)
    for spelling in ("outlet/shipping/weighted/__init__.py:fee", "shipping/weighted/__init__.py:fee",
                     "outlet/shipping/weighted/__init__.py::fee", "outlet.shipping.weighted.fee",
                     "`outlet/shipping/weighted/__init__.py:fee()`"):
        assert judged("04", 28, [*work, Final(f"VALUE: {e['value']}\nFUNCTION: {spelling}")]) is None, spelling
    why = judged("04", 28, [*work, Final(f"VALUE: {e['value']}\nFUNCTION: outlet/shipping/__init__.py:quote")])
    assert why is not None and "hedge" not in why and not answerlines.is_format_failure(why), why
    assert "dispatcher" in why, why
    # two paths on the line are still two candidates
    why = judged("04", 28, [*work, Final(f"VALUE: {e['value']}\nFUNCTION: outlet/shipping/weighted/__init__.py:fee "
                                         "or outlet/shipping/__init__.py:quote")])
    assert why is not None and "hedge" in why, why


def test_any_depth_and_main_modules_are_one_path():
    from .helpers import ROOT, load_task_module

    task = load_task_module(ROOT / "tasks" / "test_task_04_trace_through_codebase.py")
    for path in ("pkg/__init__.py:quote", "a/b/__main__.py:run", "a/b/c/d/e/__init__.py:fee", "__init__.py:fee",
                 "a\\b\\__main__.py:run"):
        assert task.functions(path) == [path.replace("\\", "/").lower()], path
    candidates, mentions = task.parsers(instance("04", 28))
    line = "outlet/shipping/__init__.py:quote"
    assert candidates(line) == mentions(line) == [line]
