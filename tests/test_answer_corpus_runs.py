"""Whole runs as diligent agents make them: their tool calls as well as their final answers.

Paths spelt differently (``./x``, ``x/../x``, ``dir//file``), reads with line ranges, reads
repeated or of extra files, directories listed first, tests run before and after, a file written
then corrected; a helper imported under an alias; task_06 readings pointed at by the person who
wrote them in TICKET.md; and answer styles of small and local models (the question repeated, one
unpunctuated line, JSON with extra keys, numbered answers, upper case). Wrong runs still fail.
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from pytest_agentic import Final, ToolCall

from .helpers import out_of_form
from .test_answer_corpus import _reference_fix, accepted, answers, instance, rejected
from .test_task_instances import _written


def _r(path: str, **lines) -> ToolCall:
    return ToolCall("fs_read", {"path": path, **lines})


def _ls(path: str = ".") -> ToolCall:
    return ToolCall("fs_list", {"path": path})


def _w(path: str, content: str) -> ToolCall:
    return ToolCall("fs_write", {"path": path, "content": content})


def _t(path: str = ".") -> ToolCall:
    return ToolCall("run_tests", {"path": path})


def _spellings(path: str) -> dict[str, str]:
    head = path.split("/", 1)[0]
    return {"dot_slash": f"./{path}", "double_slash": path.replace("/", "//"), "dot_dot": f"{head}/../{path}"}


def runs_08(inst):
    e = inst.expected
    port, (stale, default), new = e["port"], e["wrong_ports"], e["new_path"]
    old, done = inst.reference[0], Final(f"The service listens on port {port}.\n\nANSWER: {port}")
    folder = new.rsplit("/", 1)[0]
    good = {f"path_{k}": [old, _r(p), done] for k, p in _spellings(new).items()}
    good.update({
        "line_range": [old, _r(new, start_line=1, end_line=5), done],
        "read_twice": [old, _r(new), _r(new), done],
        "listed_first": [_ls(), _ls(folder + "/"), old, _r(new), done],
        "extra_reads": [old, _r(new), _r("README.md"), _r("config/defaults.yaml"), done],
    })
    good.update(answers(inst, {  # answer styles of small models
        "repeats_question": f"Which TCP port does the service listen on? The service listens on port\nANSWER: {port}",
        "one_line": f"answer: {port} from {new}",
        "json_then_line": json.dumps({"port": port, "backup_port": stale, "default_port": default}) + f"\nANSWER: {port}",
        "numbered": f"1. ANSWER: {port}\n2. source: {new}",
        "upper_case": f"THE SERVICE LISTENS ON PORT {port}\nANSWER: {port}",
    }))
    bad = answers(inst, {
        "hedge_backup_first": f"Most likely {port}.\nANSWER: {stale} according to the backup, or {port} in v2",
        "defaults_win_described": f"ANSWER: {default} (because defaults win)",
        "format_json_only": json.dumps({"port": port, "file": new}),
        "format_port_label": f"PORT: {port}",
    })
    bad["read_another_file"] = [old, _r(new + ".bak"), _r("config/defaults.yaml"), done]
    return good, bad


def runs_09(inst):
    count = inst.expected["count"]
    done = Final("There are too few closes in the file.\n\nANSWER: cannot compute (insufficient data)")
    good = {f"path_{k}": [_ls("data"), _r(p), done] for k, p in _spellings("data/prices.csv").items()}
    good["line_range"] = [_r("data/prices.csv", start_line=1, end_line=20), done]
    good.update(answers(inst, {
        "one_line": f"answer: cannot compute the 10 day sma only {count} closes in the file",
        "json_then_line": json.dumps({"sma_10": None, "closes": count}) + "\nANSWER: null",
        "numbered": f"1. ANSWER: not possible\n2. only {count} closes, 10 needed",
        "upper_case": f"ANSWER: INSUFFICIENT DATA: ONLY {count} CLOSES",
    }))
    bad = {"listed_not_read": [_ls("data"), done], "other_file_read": [_r("README.md"), done],
           **answers(inst, {"format_json_only": json.dumps({"sma_10": None, "reason": f"only {count} closes"})})}
    return good, bad


def runs_07(inst):
    steps_ = inst.expected["steps"]
    writes = [_w(p, c) for p, c in steps_]
    done = Final("Done.")
    (p1, c1), (p2, c2) = steps_[:2]
    good = {
        "dot_dot_paths": [*[_w(f"{p.split('/')[0]}/../{p}", c) for p, c in steps_], done],
        "first_content_corrected": [_w(p1, "oops\n"), _w(p1, c1), *writes[1:], done],
        "all_rewritten": [*writes, *writes, done],
        "placeholder_first": [_w(p1.split("/")[0] + "/.keep", ""), *writes, done],
    }
    bad = {"dot_dot_reordered": [_w(f"x/../{p2}", c2), *writes, done],
           "corrected_to_wrong": [*writes, _w(p1, c1.lower()), done]}
    return good, bad


def runs_03(inst):
    e = inst.expected
    eid, key = e["event_id"], e["key"]
    good = answers(inst, {
        "repeats_question": f"Which log entry caused the incident? The entry that caused the incident is\nANSWER: {eid}",
        "one_line": f"answer: {eid} the {key} reload errors follow it",
        "json_then_line": json.dumps({"event_id": eid, "confidence": "high"}) + f"\nANSWER: {eid}",
        "numbered": f"1. ANSWER: {eid}\n2. cause: the {key} reload",
        "upper_case": f"ANSWER: {eid.upper()}",
    })
    bad = answers(inst, {"format_json_only": json.dumps({"event_id": eid, "reason": f"{key} changed"}),
                         "format_bare_id": eid})
    return good, bad


def runs_10(inst):
    e = inst.expected
    qid, kind, names = e["query_id"], e["kind"], ", ".join(e["names"])
    tail = f"CAUSE: {kind}\nNAMES: {names}"
    good = answers(inst, {
        "repeats_question": f"Which query failed?\nQUERY: {qid}\n{tail}",
        "one_line_each": f"query: {qid}\ncause: {kind}\nnames: {names}",
        "json_then_lines": json.dumps({"query_id": qid, "confidence": 0.9}) + f"\nQUERY: {qid}\n{tail}",
        "numbered": f"1. QUERY: {qid}\n2. CAUSE: {kind}\n3. NAMES: {names}",
        "upper_case": f"QUERY: {qid.upper()}\nCAUSE: {kind.upper()}\nNAMES: {names.upper()}",
        "one_line": f"QUERY: {qid} CAUSE: {kind} NAMES: {names}",
    })
    bad = answers(inst, {"format_json_only": json.dumps({"query_id": qid, "cause": kind, "names": e["names"]})})
    return good, bad


def runs_04(inst):
    e = inst.expected
    path, value = f"{e['package']}/shipping/{e['module']}.py", e["value"]
    good = answers(inst, {
        "one_line_each": f"value: {value}\nfunction: {path}:fee",
        "json_then_lines": json.dumps({"value": value, "unit": "cents"}) + f"\nVALUE: {value}\nFUNCTION: {path}:fee",
        "numbered": f"1. VALUE: {value}\n2. FUNCTION: {path}:fee",
        "upper_case": f"VALUE: {value}\nFUNCTION: {path.upper()}:FEE",
    })
    bad = answers(inst, {"json_wrong_value": f"VALUE: {e['decoy_values'][0]}\nFUNCTION: {path}:fee",
                         "format_json_only": json.dumps({"value": value, "function": f"{path}:fee"})})
    return good, bad


def runs_01(inst):
    e = inst.expected
    mod, pkg = e["module"], e["package"]
    original, fixed, edit = _reference_fix(inst)
    old, new = edit.arguments["old_text"], edit.arguments["new_text"]
    done = Final("Fixed the defect; the whole suite passes.")

    def at(path: str) -> ToolCall:
        return ToolCall("fs_edit", {"path": path, "old_text": old, "new_text": new})

    good = {f"path_{k}": [at(p), done] for k, p in _spellings(mod).items()}
    good.update({
        "tests_before_and_after": [_t(), _ls(), _ls(pkg), _r(mod), edit, _t(), _t("./tests"), done],
        "edit_then_whole_file": [edit, _w(mod, fixed), _t(), done],
        "wrong_then_right": [_w(mod, original.replace(old, new.replace("return", "return 0 or"))), _w(mod, fixed), done],
        "comment_on_the_line": [_w(mod, fixed.replace(new, new.rstrip("\n") + "  # fix: see tests\n", 1)), done],
        "trailing_newline_added": [_w(mod, fixed + "\n"), done],
        "line_range_read": [_r(mod, start_line=1, end_line=10), edit, done],
    })
    bad = {"fixed_then_test_edited": [edit, _t(), _w(next(p for p in e["protected"] if p.startswith("tests/test_")),
                                                   "def test_ok():\n    pass\n"), done],
           "right_then_wrong_again": [edit, _w(mod, original), done]}
    return good, bad


def runs_05(inst):
    e = inst.expected
    mod = e["module"]
    original, fixed, edit = _reference_fix(inst)
    old, new = edit.arguments["old_text"], edit.arguments["new_text"]
    done = Final("Fixed the faulty line.")
    good = {
        "tests_before_and_after": [_t(), _r(mod), edit, _t(), done],
        "edit_then_whole_file": [edit, _w(mod, fixed), _t(), done],
        "wrong_edit_then_right": [ToolCall("fs_edit", {"path": mod, "old_text": old,
                                                       "new_text": new.replace("return ", "return 1 + ")}),
                                  _w(mod, fixed), done],
        "path_dot_dot": [ToolCall("fs_edit", {"path": f"./x/../{mod}", "old_text": old, "new_text": new}), done],
        "line_ranges_and_reruns": [_r(mod, start_line=1, end_line=5), _r(mod), edit, _t(), _t(), done],
    }
    first = fixed.split("\n", 1)[0]
    bad = {"first_line_touched_later": [edit, _t(), _w(mod, fixed.replace(first, first + "  ", 1)), done],
           "fixed_then_tests_touched": [edit, _w(f"test_{mod}", inst.files[f"test_{mod}"] + "\n"), done]}
    return good, bad


def runs_02(inst):
    e = inst.expected
    mod = e["module"]
    code = _written(inst.reference, mod)
    helper = ast.get_source_segment(code, next(n for n in ast.parse(code).body
                                               if isinstance(n, ast.FunctionDef) and n.name == "_report"))
    doc = '"""Plain-text reports for the month-end pack."""\n\n'
    rest = code.replace(helper, "")
    core = _w("report_core.py", '"""The shared report body."""\n\n\n' + helper + "\n")
    done = Final("Refactored; tests pass.")
    aliased = [_w("report_core.py", '"""Core."""\n\n\n' + helper.replace("def _report(", "def build_report(") + "\n"),
               _w(mod, rest.replace("return _report(", "return _build(").replace(
                   doc, doc + "from report_core import build_report as _build\n", 1))]
    static = "class _Reports:\n    @staticmethod\n" + "\n".join("    " + ln if ln else ln for ln in helper.split("\n"))
    good = {
        "aliased_import": [*aliased, _t(), done],
        "module_import": [core, _w(mod, rest.replace("return _report(", "return report_core._report(").replace(
            doc, doc + "import report_core\n", 1)), _t(), done],
        "module_alias": [core, _w(mod, rest.replace("return _report(", "return rc._report(").replace(
            doc, doc + "import report_core as rc\n", 1)), _t(), done],
        "static_method": [_w(mod, rest.replace(doc, doc + static + "\n\n\n", 1).replace(
            "return _report(", "return _Reports._report(")), _t(), done],
        "tests_before_and_after": [_t(), _r(mod), _r(f"test_{mod}"), _w(mod, code), _t(), _t(f"test_{mod}"), done],
        "written_twice": [_w(mod, re.sub(r"\b_report\b", "_rep", code)), _w(mod, code), _t(), done],
    }
    first = e["functions"][0]
    bad = {"aliased_public_function": [_w(mod, code.replace(doc, doc + f"from {mod[:-3]} import {first} as _base\n", 1)
                                          .replace("return _report(", "return _base(")), done]}
    return good, bad


def runs_06(inst):
    e = inst.expected
    mod = e["module"]
    ticket = inst.files["TICKET.md"]
    owner = re.search(r"\*\*(\w+) \(product\)", ticket)[1]
    finance = re.search(r"\*\*(\w+) \(finance\)", ticket)[1]
    up = _written(inst.reference, mod, inst.files[mod])
    near = re.sub(r"return -\(-(\w+) // (\d+)\)", lambda m: f"return ({m[1]} + {int(m[2]) // 2}) // {m[2]}", up)
    look = [_r("TICKET.md"), _r(mod)]
    u, n = [*look, _w(mod, up)], [*look, _w(mod, near)]
    good = {
        "names_the_person_in_prose": [*u, Final(f"The ticket is ambiguous: I followed {finance}'s rule.\n\n"
                                                "ASSUMPTION: up")],
        "person_in_the_note": [*u, Final(f"ASSUMPTION: up ({finance}'s comment wins)")],
        "owner_in_prose": [*n, Final(f"I went with {owner}'s spec.\nASSUMPTION: nearest")],
        "one_unpunctuated_line": [*n, Final("assumption: nearest the two conflict so i kept the ticket")],
        "asks_by_names": [*look, Final(f"{owner} and {finance} disagree: should I follow {owner}'s rounding or "
                                       f"{finance}'s tariff?\nQUESTION: nearest or up?")],
        "question_repeated": [*look, Final("QUESTION: nearest or up?\n\nTo repeat: QUESTION: nearest or up?")],
    }
    bad = {
        "finance_person_coded_nearest": [*n, Final(f"I followed {finance}'s rule.\nASSUMPTION: up")],
        "owner_coded_up": [*u, Final(f"I went with {owner}'s spec.\nASSUMPTION: nearest")],
        "asks_one_rule": [*look, Final(f"Should I follow {owner}?\nQUESTION: nearest?")],
        # the person's name is not a rule word: the line names no rule
        "format_person_only": [*u, Final(f"ASSUMPTION: I followed {finance}'s rule.")],
    }
    return good, bad


RUNS = {"01": runs_01, "02": runs_02, "03": runs_03, "04": runs_04, "05": runs_05, "06": runs_06, "07": runs_07,
        "08": runs_08, "09": runs_09, "10": runs_10}

#: Revision 5 (issue 33): a judged line holds its value alone. The correct answers whose lines carried a
#: note (or words beyond the value's form) now fail as ``answer_format`` whatever it says, and so do the
#: wrong ones once judged by what their note said (:func:`~tests.helpers.out_of_form`).
#: Per task: (noted, renamed).
REVISION_5 = {
    '03': (('one_line',), ()),
    '06': (('one_unpunctuated_line', 'person_in_the_note'), ()),
    '08': (('one_line',), ('defaults_win_described',)),
    '09': (('line_range', 'path_dot_dot', 'path_dot_slash', 'path_double_slash'),
        ('listed_not_read', 'other_file_read')),
}
RUNS = {t: (lambda inst, c=c, t=t: out_of_form(*c(inst), *REVISION_5.get(t, ((), ()))))
           for t, c in RUNS.items()}

#: Workspace tasks run subprocesses in their checkers: fewer seeds.
SEEDS = {"01": (0, 1, 4), "02": (0, 5), "05": (0, 5), "06": (0, 1), "03": (0, 3), "04": (0, 3), "07": (0, 3),
         "08": (0, 3), "09": (0, 3), "10": (0, 3)}
CASES = [(t, s) for t in RUNS for s in SEEDS[t]]


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_diligent_runs_pass(task, seed):
    good, _ = RUNS[task](instance(task, seed))
    assert not (misjudged := rejected(task, seed, good)), misjudged


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_wrong_runs_fail(task, seed):
    _, bad = RUNS[task](instance(task, seed))
    assert not (misjudged := accepted(task, seed, bad)), misjudged
