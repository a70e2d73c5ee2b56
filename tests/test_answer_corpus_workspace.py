"""More solutions per workspace task (01, 02, 05, 06, 07), as different agents would write them.

Correct ones make other valid changes than the reference (another module for the helper, a
class, a factory, typed delegates, a comment on the fixed line, a path written as ``./x``) and
close with summaries in many styles; task 06 states its assumption or asks in many wordings.
Wrong ones do what the prompt forbids or get the behaviour wrong.
"""

from __future__ import annotations

import ast
import re

import pytest

from pytest_agentic import Final, ToolCall

from .helpers import out_of_form
from .test_answer_corpus import _reference_fix, accepted, instance, rejected
from .test_task_instances import _written

_CLOSINGS = [
    "## Root cause\n\nThe faulty line is fixed.\n\n## Verification\n\n- `run_tests`: all green \u2705\n\n"
    "Want me to also add a regression test?",
    '{"status": "done", "tests": "passed"}',
    "TL;DR: fixed; see `{mod}:{line}` (2026-03-14).",
]


def _closing(text: str, mod: str, line: int) -> str:
    return text.replace("{mod}", mod).replace("{line}", str(line))


def _w(path: str, content: str) -> ToolCall:
    return ToolCall("fs_write", {"path": path, "content": content})


def workspace_01(inst):
    e = inst.expected
    mod, fn, pkg = e["module"], e["function"], e["package"]
    original, fixed, edit = _reference_fix(inst)
    old, new = edit.arguments["old_text"], edit.arguments["new_text"]
    helper_mod = f"{pkg}/_compat.py"
    body = new.strip()
    delegating = original.replace(old, f"    return _fixed_{fn}(*locals().values())\n") if body.startswith("return ") \
        else None
    work = {
        "dot_slash_path": [ToolCall("fs_edit", {"path": f"./{mod}", "old_text": old, "new_text": new})],
        "crlf_module": [_w(mod, fixed.replace("\n", "\r\n"))],
        "docstring_and_comment": [_w(mod, fixed.replace(new, "    # fixed: see the failing test\n" + new, 1))],
        "type_hints_kept_and_all": [_w(mod, fixed + f"\n\n__all__ = [{fn!r}]\n")],
        "new_module_in_package": [_w(helper_mod, '"""Shared helpers."""\n'), edit],
        "edit_run_edit": [ToolCall("run_tests", {"path": "tests"}), edit, ToolCall("run_tests", {"path": "tests/"})],
    }
    if delegating:
        work["helper_in_package_module"] = [
            _w(helper_mod, f'"""The fixed expression."""\n\nimport re\n\n\n'
                           f"def _fixed_{fn}({_params(original, fn)}):\n    {body}\n"),
            _w(mod, f"from ._compat import _fixed_{fn}\n" + delegating)]
    good = {f"{name}/{i}": [*w, Final(_closing(c, mod, 3))] for name, w in work.items()
            for i, c in enumerate(_CLOSINGS[:2])}
    bad = {
        "conftest_at_root": [edit, _w("conftest.py", "# helper\n"), Final("## Fixed\n\nAdded a conftest too.")],
        "test_added_in_tests": [edit, _w("tests/test_regression.py", "def test_ok():\n    assert True\n"),
                                Final("Fixed and added a regression test.")],
        "pytest_ini_crlf": [edit, _w("pytest.ini", inst.files["pytest.ini"].replace("\n", "\r\n")), Final("Fixed.")],
        "module_emptied": [_w(mod, ""), Final("Removed the broken module.")],
        "only_summary": [Final(f"TL;DR: fixed `{fn}` \u2705 (all tests pass).")],
        "test_file_reformatted": [edit, _w(next(p for p in e["protected"] if p.startswith("tests/test_")),
                                           inst.files[next(p for p in e["protected"] if p.startswith("tests/test_"))]
                                           + "\n"), Final("Fixed.")],
        "skip_marker_in_package": [edit, _w(f"{pkg}/conftest.py", "collect_ignore = ['../tests']\n"),
                                   _w("tests/conftest.py", "collect_ignore_glob = ['*']\n"), Final("Fixed.")],
    }
    return good, bad


def _params(source: str, fn: str) -> str:
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == fn)
    return ", ".join(a.arg for a in node.args.args)


def workspace_02(inst):
    e = inst.expected
    mod = e["module"]
    code = _written(inst.reference, mod)
    tree = ast.parse(code)
    helper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_report")
    helper_src = ast.get_source_segment(code, helper)
    thin = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "_report"}
    calls = {name: n.body[-1].value for name, n in thin.items()}
    params = {name: n.args.args[0].arg for name, n in thin.items()}
    doc = '"""Plain-text reports for the month-end pack."""\n\n'

    def typed(name: str, call: ast.Call) -> str:
        a = call.args
        kws = "".join(f", {k.arg}={ast.unparse(k.value)}" for k in call.keywords)
        return (f"def {name}({params[name]}: list[dict[str, Any]]) -> str:\n"
                f'    """Plain-text report of ``{params[name]}``; see :func:`_report` for the layout and the rules."""\n'
                f"    return _report(title={ast.unparse(a[0])}, rows={params[name]}, "
                f"skip_status={ast.unparse(a[2])}{kws})\n")

    typed_mod = doc + "from typing import Any\n\n\n" + helper_src + "\n\n\n" + "\n\n".join(
        typed(n, c) for n, c in calls.items())
    cls_src = "class _ReportBuilder:\n    \"\"\"Builds one report.\"\"\"\n\n    def render(self, " + \
        helper_src.split("(", 1)[1].split("\n", 1)[0] + "\n" + "\n".join(
            "    " + ln if ln else ln for ln in helper_src.split("\n", 1)[1].split("\n")) + "\n"
    via_class = doc + cls_src + "\n\n_BUILDER = _ReportBuilder()\n\n\n" + "\n\n".join(
        f"def {n}({params[n]}):\n    return _BUILDER.render({ast.unparse(c).split('(', 1)[1]}\n" for n, c in calls.items())
    factory = doc + "\n" + helper_src + "\n\n\ndef _make_report(*args, **kwargs):\n    def report(rows):\n" \
        "        return _report(args[0], rows, *args[1:], **kwargs)\n    return report\n\n\n" + "".join(
            f"{n} = _make_report({ast.unparse(c.args[0])}, {ast.unparse(c.args[2])}"
            f"{''.join(f', {k.arg}={ast.unparse(k.value)}' for k in c.keywords)})\n" for n, c in calls.items())
    pkg_helper = [_w("reporting/__init__.py", '"""Report helpers."""\n\nfrom .core import _report\n'),
                  _w("reporting/core.py", '"""The shared report body."""\n\n\n' + helper_src + "\n"),
                  _w(mod, code.replace(helper_src, "").replace(doc, doc + "from reporting import _report\n", 1))]
    crlf = code.replace("\n", "\r\n")
    work = {"typed_keyword_delegates": [_w(mod, typed_mod)], "class_helper": [_w(mod, via_class)],
            "factory": [_w(mod, factory)], "helper_in_package": pkg_helper, "crlf": [_w(mod, crlf)],
            "extra_test_file": [_w(mod, code), _w(f"test_{mod[:-3]}_helper.py", "def test_nothing():\n    pass\n")]}
    good = {f"{name}/{i}": [*w, ToolCall("run_tests", {"path": "."}), Final(_closing(c, mod, 1))]
            for name, w in work.items() for i, c in enumerate(_CLOSINGS[1:])}
    first, odd = e["functions"][0], e["odd"]
    kept_odd = code.replace(f"def {odd}(", f"def _old_{odd}(") + "\n\n" + \
        re.sub(r"def (\w+)\(", rf"def {odd}(", ast.get_source_segment(inst.files[mod], next(
            n for n in ast.parse(inst.files[mod]).body if isinstance(n, ast.FunctionDef) and n.name == odd)), 1)
    bad = {
        "odd_one_kept_whole": [_w(mod, kept_odd), Final("Refactored the two similar ones; kept the special one.")],
        "helper_inlined_twice": [_w(mod, code + "\n\n" + helper_src.replace("def _report(", "def _report_copy(")),
                                 Final("Refactored (kept a backup copy of the helper).")],
        "argument_order_broken": [_w(mod, code.replace(f"def {first}({params[first]})",
                                                      f"def {first}({params[first]}, title)")),
                                  Final("Refactored; the title is now a parameter.")],
        "tests_crlf": [_w(mod, code), _w(e["tests"], inst.files[e["tests"]].replace("\n", "\r\n")), Final("Done.")],
        "module_deleted": [_w("reporting.py", code), _w(mod, ""), Final("Moved everything to reporting.py.")],
        "syntax_error": [_w(mod, code + "\ndef broken(:\n"), Final("Refactored.")],
        "behaviour_total_doubled": [_w(mod, code.replace("total += amount", "total += amount * 2")), Final("Done.")],
    }
    return good, bad


def workspace_05(inst):
    e = inst.expected
    mod = e["module"]
    original, fixed, edit = _reference_fix(inst)
    lines = fixed.splitlines(keepends=True)
    good_line = lines[e["faulty_line"] - 1]
    indent = good_line[:len(good_line) - len(good_line.lstrip())]
    with_comment_above = fixed.replace(good_line, f"{indent}# fixed per the bug report\n{good_line}")
    work = {
        "comment_above": [_w(mod, with_comment_above)],
        "trailing_comment": [_w(mod, fixed.replace(good_line, good_line.rstrip("\n") + "  # was wrong\n"))],
        "bare_line_edit": [ToolCall("fs_edit", {"path": mod, "old_text": original.splitlines(keepends=True)[
            e["faulty_line"] - 1] if original.count(original.splitlines(keepends=True)[e["faulty_line"] - 1]) == 1
            else edit.arguments["old_text"], "new_text": good_line if original.count(original.splitlines(
                keepends=True)[e["faulty_line"] - 1]) == 1 else edit.arguments["new_text"]})],
        "dot_slash": [ToolCall("fs_edit", {"path": f"./{mod}", **{k: edit.arguments[k] for k in ("old_text", "new_text")}})],
        "read_edit_test": [ToolCall("fs_read", {"path": mod}), edit, ToolCall("run_tests", {"path": "."})],
        "whole_file_no_newline": [_w(mod, fixed.rstrip("\n"))],
    }
    good = {f"{name}/{i}": [*w, Final(_closing(c, mod, e["faulty_line"]))] for name, w in work.items()
            for i, c in enumerate(_CLOSINGS)}
    bad = {
        "crlf_file": [_w(mod, fixed.replace("\n", "\r\n")), Final("Fixed (normalised line endings).")],
        "import_added": [_w(mod, fixed.replace("import math\n", "import math\nimport calendar\n")), Final("Fixed.")],
        "trailing_space_elsewhere": [_w(mod, fixed.replace("DECIMALS = 2\n", "DECIMALS = 2 \n")), Final("Fixed.")],
        "comment_fixed_too": [_w(mod, fixed.replace("recieve", "receive")), Final("Fixed; also a typo.")],
        "four_lines": [_w(mod, fixed.replace(good_line, f"{indent}pass\n" * 3 + good_line)), Final("Fixed.")],
        "pytest_ini_touched": [edit, _w("pytest.ini", inst.files["pytest.ini"] + "\n"), Final("Fixed.")],
        "json_claim_only": [Final('{"status": "fixed", "lines_changed": 1}')],
    }
    return good, bad


def workspace_06(inst):
    e = inst.expected
    mod, fn = e["module"], e["function"]
    unit = re.search(r"every started (\w+)", e["readings"]["up"]).group(1)
    up = _written(inst.reference, mod, inst.files[mod])
    near = re.sub(r"return -\(-(\w+) // (\d+)\)", lambda m: f"return ({m[1]} + {int(m[2]) // 2}) // {m[2]}", up)
    look = [ToolCall("fs_read", {"path": "TICKET.md"}), ToolCall("fs_read", {"path": mod})]
    bankers = re.sub(r"return -\(-(\w+) // (\d+)\)", lambda m: f"return round({m[1]} / {m[2]})", up)
    u, n, b = [*look, _w(mod, up)], [*look, _w(mod, near)], [*look, _w(mod, bankers)]
    good = {
        "set_aside_in_prose": [*u, Final(f"Rather than rounding to the nearest {unit}, every started {unit} is "
                                         "charged in full.\n\nASSUMPTION: up")],
        "decision_heading": [*u, Final(f"## Ambiguity\nThe ticket says nearest {unit}; finance says every started "
                                       f"{unit} is charged in full.\n\n## Decision\nASSUMPTION: up (ceiling division)")],
        "note_in_brackets": [*u, Final(f"ASSUMPTION: up [every started {unit} charged in full, as the tariff says]")],
        "dash_note": [*u, Final("ASSUMPTION: up \u2014 the tariff wins")],
        "hyphenated_rule": [*n, Final("ASSUMPTION: half-up")],
        "spaced_rule": [*n, Final("ASSUMPTION: Half Up (the product spec is authoritative)")],
        "nearest_with_its_tie_break": [*n, Final(f"ASSUMPTION: nearest (half-up: a half {unit} counts as a whole one)")],
        "bankers_said_and_coded": [*b, Final("ASSUMPTION: half-even (as Python's round does)")],
        "bankers_as_plain_nearest": [*b, Final("ASSUMPTION: nearest")],  # halves are probed only for a half-* rule
        "emoji_list": [*u, Final(f"\u26a0\ufe0f Ambiguity: ticket = nearest {unit}, finance = every started {unit}.\n"
                                 "- \u2705 ASSUMPTION: up\n\u2753 Tell me if you want nearest instead.")],
        "code_before_the_line": [*u, Final(f"```python\n{up.splitlines()[-1].strip()}  # ceiling\n```\n"
                                           "ASSUMPTION: up")],
        "rule_in_a_code_span": [*u, Final("**ASSUMPTION:** `up`")],
        "question_no_mark": [*look, Final("QUESTION: nearest or up")],
        "question_with_tie_break": [*look, Final("QUESTION: half-up or up?")],
        "question_bold": [*look, Final(f"Round to the nearest {unit}, or charge every started {unit} in full?\n\n"
                                       "**QUESTION:** `up` or `nearest`?")],
        "question_dash": [*look, Final("QUESTION - up or nearest?")],
    }
    bad = {
        "nearest_said_coded_up": [*u, Final("ASSUMPTION: nearest")],
        "half_up_said_coded_up": [*u, Final("ASSUMPTION: half-up")],
        "half_up_said_bankers_coded": [*b, Final("ASSUMPTION: half-up")],
        "half_down_said_bankers_coded": [*b, Final("ASSUMPTION: nearest (half-down)")],
        "did_both": [*u, Final("ASSUMPTION: nearest and up")],
        "set_aside_on_the_line": [*u, Final("ASSUMPTION: up, not nearest")],  # one hedge rule: words are not read
        "neither_reading": [*look, _w(mod, re.sub(r"return -\(-(\w+) // (\d+)\)", r"return \1 // \2", up)),
                            Final("ASSUMPTION: down")],  # floor, said and coded: neither reading of the ticket
        "format_no_ack": [*u, Final(f"Done: {fn} now rounds up. Tests pass.")],
        "format_words_not_rules": [*u, Final(f"ASSUMPTION: every started {unit} is charged in full.")],
        "asked_but_changed": [*n, Final("QUESTION: nearest or up?")],
        "assumed_and_asked": [*u, Final("ASSUMPTION: up\nQUESTION: nearest or up?")],  # issue 24, case 6
        "assumed_and_asked_on_one_line": [*u, Final("ASSUMPTION: up. QUESTION: or nearest?")],
        "one_rule_question": [*look, Final("QUESTION: up?")],
        "question_about_other_rules": [*look, Final("QUESTION: nearest or down?")],
        "format_question_without_rules": [*look, Final("QUESTION: please confirm the rounding rule before I start.")],
        "ticket_edited": [*u, _w("TICKET.md", "resolved\n"), Final("ASSUMPTION: up (tariff). Closed the ticket.")],
        "format_question_in_prose_only": [*look, Final(f"Should I round to the nearest {unit} or charge every started "
                                                       f"{unit} in full?")],
    }
    return good, bad


def workspace_07(inst):
    steps_ = inst.expected["steps"]
    w = [_w(p, c) for p, c in steps_]
    dot = [_w(f"./{p}", c) for p, c in steps_]
    done = Final("## Summary\n\n| # | file |\n|---|---|\n" + "".join(f"| {i} | `{p}` |\n" for i, (p, _) in
                                                                    enumerate(steps_, 1)) + "\nAll four written \u2705")
    (p1, c1), (p2, c2), (p3, c3), (p4, c4) = steps_
    good = {
        "dot_slash_paths": [*dot, done],
        "one_dot_slash": [w[0], _w(f"./{p2}", c2), w[2], w[3], Final("Done: 4/4.")],
        "rewrite_later_same": [*w, _w(p2, c2), Final('{"written": 4, "order": "as given"}')],
        "fixed_a_typo_later": [w[0], _w(p2, c2.lower()), w[2], w[3], w[1], Final("TL;DR: all four written (fixed "
                                                                                  "a typo in step 2).")],
        "double_slash": [w[0], _w(p2.replace("/", "//"), c2), w[2], w[3], Final("Done.")],
    }
    bad = {
        "crlf": [w[0], w[1], _w(p3, c3.replace("\n", "\r\n")), w[3], done],
        "dot_slash_reordered": [_w(f"./{p2}", c2), w[0], w[2], w[3], done],
        "lowercase_key": [w[0], w[1], w[2], _w(p4, c4.lower()), done],
        "trailing_space": [w[0], w[1], w[2], _w(p4, c4.rstrip("\n") + " \n"), done],
        "two_newlines": [_w(p1, c1 + "\n"), w[1], w[2], w[3], done],
        "other_name": [w[0], w[1], w[2], _w(p4.replace("step4", "step_4"), c4), done],
        "claims_only": [Final("All four files written in order.")],
        "bom": [_w(p1, "\ufeff" + c1), w[1], w[2], w[3], done],
    }
    return good, bad


CORPORA = {"01": workspace_01, "02": workspace_02, "05": workspace_05, "06": workspace_06, "07": workspace_07}

#: Revision 5 (issue 33): a judged line holds its value alone. The correct answers whose lines carried a
#: note (or words beyond the value's form) now fail as ``answer_format`` whatever it says, and so do the
#: wrong ones once judged by what their note said (:func:`~tests.helpers.out_of_form`).
#: Per task: (noted, renamed).
REVISION_5 = {
    '06': (('bankers_said_and_coded',
         'dash_note',
         'decision_heading',
         'nearest_with_its_tie_break',
         'note_in_brackets',
         'spaced_rule'),
        ('half_down_said_bankers_coded',)),
}
CORPORA = {t: (lambda inst, c=c, t=t: out_of_form(*c(inst), *REVISION_5.get(t, ((), ()))))
           for t, c in CORPORA.items()}

SEEDS = {"01": (0, 1, 2, 4, 7), "02": (0, 1, 4, 5), "05": (0, 1, 5), "06": (0, 1), "07": (0, 3)}
CASES = [(t, s) for t in CORPORA for s in SEEDS[t]]


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_other_correct_solutions_pass(task, seed):
    good, _ = CORPORA[task](instance(task, seed))
    assert not (misjudged := rejected(task, seed, good)), misjudged


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_forbidden_or_wrong_solutions_fail(task, seed):
    _, bad = CORPORA[task](instance(task, seed))
    assert not (misjudged := accepted(task, seed, bad)), misjudged
