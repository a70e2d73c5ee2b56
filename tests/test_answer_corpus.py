"""An answer corpus per task: correct answers in many styles pass, wrong ones fail as wrong_answer.

Correct answers reason, rule out alternatives, add labelled side figures, use
Markdown, tables, code blocks and number words, and put the answer first or
last; for the tasks judged by the workspace (01, 02, 05, 06, 07) they also
make other valid changes than the reference's. Wrong answers include the
confident-and-structured wrong answers of published campaigns and answers that
state the right value only to reject it. Every one is played through the
scripted provider and the agent loop, and judged by the task's own checker.
"""

from __future__ import annotations

import functools
import re
import tempfile
from pathlib import Path

import pytest

from pytest_agentic import Final, ToolCall
from pytest_agentic.run import answerlines
from pytest_agentic.run.answers import final_claim
from pytest_agentic.run.failures import classify
from pytest_agentic.run.records import FailureMode

from .corpus_10 import corpus_10
from .helpers import ROOT, load_task_module, out_of_form, play, restate, steps, think as _think
from .test_task_instances import _alternatives, _written

MODULES = {p.stem.split("_")[2]: p for p in sorted((ROOT / "tasks").glob("test_task_*.py"))}


@functools.cache
def instance(task: str, seed: int):
    return load_task_module(MODULES[task]).build(seed)


def answers(inst, texts: dict[str, str]) -> dict[str, list]:
    return {name: [*steps(inst), Final(text)] for name, text in texts.items()}


def summaries(name: str, work: list) -> dict[str, list]:
    """The same work, closed by two differently styled summaries."""
    return {f"{name}/plain": [*work, Final("Done: fixed it and the tests pass.")],
            f"{name}/markdown": [*work, Final("## Summary\n\n- **What:** the change described above\n"
                                              "- **Tests:** all green\n\nLet me know if you want more.")]}


# --------------------------------------------------------------------------- answer tasks


def corpus_03(inst):
    e = inst.expected
    eid, key, d = e["event_id"], e["key"], e["decoys"]
    line = next(ln for ln in inst.files[next(iter(inst.files))].splitlines() if f"id={eid}" in ln)
    others = (f"The first error ({d['first_error']}) is a consequence, the ledger timeouts ({d['recurring_error']}) "
              f"recur all day and are retried, and {d['benign_change']} is a harmless flag reload.")
    a = {"ANSWER": eid}
    good = restate(inst, {
        "bare": ("", a),
        "heading_bold": (f"# Root cause\n\n**Event `{eid}`**: the reload of `{key}` started the failures.", a),
        "rules_out_every_other": (f"{others} The root cause is the change of {key}.", a),
        "report": (f"## Incident report\n\n| entry | role |\n|---|---|\n| {d['first_error']} | first error |\n"
                   f"| {d['benign_change']} | harmless reload |\n| {eid} | cause |\n\n## Answer", a),
        "after_think": (_think(f"Is it {d['first_error']}? No, that is a symptom. {d['benign_change']}? Harmless.")
                        + f"{key} was changed right before the warnings.", a),
        "upper_case": (f"{key} changed.", {"ANSWER": eid.upper()}),
        "id_field": (f"{key} changed at runtime.", {"ANSWER": f"id={eid}"}),
        "quoted_line": (f"```\n{line}\n```\nEverything after it degrades. {others}", a),
        "note_in_brackets": ("The pool change.", {"ANSWER": f"{eid} (the {key} reload)"}),
        "dash_note": ("", {"ANSWER": f"{eid} \u2014 {key} changed, then warnings, then errors"}),
        "offer_after": ("", {"ANSWER": eid}),
        "same_id_twice": (f"Root cause:\nANSWER: {eid}\n\nTo sum up:", a),
    })
    good["offer_after"][-1] = Final(f"ANSWER: {eid}\n\nIf you want, I can suggest a safe value for {key}.")
    bad = {**inst.near_misses, **restate(inst, {
        "confident_first_error": (f"The root cause is clearly {d['first_error']}.", {"ANSWER": d["first_error"]}),
        "recurring": ("", {"ANSWER": d["recurring_error"]}),
        "benign_change": ("A config reload right before the errors.", {"ANSWER": d["benign_change"]}),
        "hedged_on_the_line": ("", {"ANSWER": f"{eid} or {d['first_error']}"}),
        "hedged_in_a_note": ("", {"ANSWER": f"{eid} (or maybe {d['first_error']})"}),
        "format_misspelt_id": ("", {"ANSWER": f"{eid[:-1]}z"}),
        "right_in_prose_wrong_line": (f"The change of {key} ({eid}) is the cause.", {"ANSWER": d["benign_change"]}),
        "format_no_line": (f"The root cause is event {eid}: {key} was changed.", None),
        "format_only_in_think": (_think(f"ANSWER: {eid}") + f"It is the {key} change.", None),
        "format_no_id_on_the_line": ("", {"ANSWER": f"the {key} change"}),
    })}
    bad["disagreeing_lines"] = [*steps(inst), Final(f"ANSWER: {eid}\n\nOn second thought:\nANSWER: {d['first_error']}")]
    return good, bad


def corpus_04(inst):
    e = inst.expected
    value, pkg, mod = e["value"], e["package"], e["module"]
    path = f"{pkg}/shipping/{mod}.py"
    decoy_value, other_value = e["decoy_values"][0], e["decoy_values"][-1]
    decoy_path = f"{pkg}/shipping/{e['decoy_modules'][0]}.py"
    ok = {"VALUE": value, "FUNCTION": f"{path}:fee"}
    chain = (f"checkout builds the order, then quote() dispatches the mode through _STRATEGIES to the fee it "
             f"imported, which reads the patched tariff table. {decoy_path}:fee would give {decoy_value} and the "
             f"other strategy {other_value}, but neither is called.")
    good = restate(inst, {
        "plain": ("", ok),
        "chain_naming_the_others": (chain, ok),
        "grouped": ("", {"VALUE": f"{value:,}", "FUNCTION": f"{path}:fee"}),
        "with_unit": ("", {"VALUE": f"{value} cents", "FUNCTION": f"{path}:fee"}),
        "function_first": ("", {"FUNCTION": f"{path}:fee", "VALUE": value}),
        "double_colon": ("", {"VALUE": value, "FUNCTION": f"{path}::fee"}),
        "dotted": ("", {"VALUE": value, "FUNCTION": f"{pkg}.shipping.{mod}.fee"}),
        "backslashes": ("", {"VALUE": value, "FUNCTION": f"{pkg}\\shipping\\{mod}.py:fee"}),
        "notes": ("", {"VALUE": f"{value} (cents)", "FUNCTION": f"{path}:fee (via quote() and _STRATEGIES)"}),
        "after_think": (_think(f"{decoy_path} looks like it by name... but it is never imported.") + chain, ok),
        "report": (f"## Trace\n\n| step | file |\n|---|---|\n| dispatch | {pkg}/shipping/__init__.py |\n"
                   f"| fee | {path} |\n\n## Answer", ok),
        "short_path": ("", {"VALUE": value, "FUNCTION": f"shipping/{mod}.py:fee"}),
    })
    bad = {**inst.near_misses, **restate(inst, {
        "right_prose_wrong_value": (f"It returns {value}.", {"VALUE": value + 100, "FUNCTION": f"{path}:fee"}),
        "decoy_function": ("", {"VALUE": value, "FUNCTION": f"{decoy_path}:fee"}),
        "decoy_value": ("", {"VALUE": decoy_value, "FUNCTION": f"{path}:fee"}),
        "two_values": ("", {"VALUE": f"{value} or {decoy_value}", "FUNCTION": f"{path}:fee"}),
        "value_hedged_in_a_note": ("", {"VALUE": f"{value} (possibly {decoy_value})", "FUNCTION": f"{path}:fee"}),
        # one hedge rule: a second candidate on a judged line fails whatever the words, set aside too
        "value_set_aside_in_a_note": ("", {"VALUE": f"{value} (not {decoy_value})", "FUNCTION": f"{path}:fee"}),
        "decoy_as_an_alternative": ("", {"VALUE": value, "FUNCTION": f"{path}:fee (alt. {decoy_path}:fee)"}),
        "decoy_module_in_a_note": ("", {"VALUE": value, "FUNCTION": f"{path}:fee (not {decoy_path.rsplit('/', 1)[1]})"}),
        "decoy_loosely_spelt": ("", {"VALUE": value,
                                     "FUNCTION": f"{path}:fee (or {decoy_path.rsplit('/', 1)[1][:-3]}.fee)"}),
        "dispatcher": ("", {"VALUE": value, "FUNCTION": f"{pkg}/shipping/__init__.py:quote"}),
        "format_no_function_line": (f"`{path}:fee` computes it.", {"VALUE": value}),
        "format_no_lines": (f"`{path}:fee` returns {value}.", None),
        "format_dollars": ("", {"VALUE": f"${value / 100:.2f}", "FUNCTION": f"{path}:fee"}),
        "format_function_without_a_module": ("", {"VALUE": value, "FUNCTION": "fee"}),
    })}
    bad["disagreeing_value_lines"] = [*steps(inst), Final(f"VALUE: {value}\nFUNCTION: {path}:fee\n\nVALUE: {decoy_value}")]
    return good, bad


def corpus_08(inst):
    e = inst.expected
    port, (stale, default), new_path = e["port"], e["wrong_ports"], e["new_path"]
    service = new_path.rsplit("/", 1)[1][:-5]
    both = (f"Two other files hold different ports, and neither is the live value: `config/{service}.yaml.bak` "
            f"says {stale}, but it is a backup from before the migration; `config/defaults.yaml` says {default}, "
            "only a default.")
    a = {"ANSWER": port}
    good = restate(inst, {
        "issue_10": (f"The {service} service listens on TCP port {port}. {both}", a),
        "bare": ("", a),
        "rules_out_both": (f"Not {stale} and not {default}.", a),
        "real_one_is_the_backup_prose": (f"At first I thought the real port is {stale}, but that is the backup.", a),
        "table": (f"| file | port |\n|---|---|\n| {new_path} | {port} |\n| config/{service}.yaml.bak | {stale} |\n"
                  f"| config/defaults.yaml | {default} |", a),
        "grouped": ("", {"ANSWER": f"{port:,}"}),
        "with_unit": ("", {"ANSWER": f"port {port}/tcp"}),
        "yaml_block": (f"```yaml\nlisten:\n  host: 0.0.0.0\n  port: {port}\n```", a),
        "note_without_a_number": ("", {"ANSWER": f"{port} (the moved file's, not the backup's)"}),
        "after_think": (_think(f"Maybe {stale}? Or {default}? The error names {new_path}.") + both, a),
        "json_before": (f'{{"port": {port}, "backup_port": {stale}}}', a),
        "note_with_the_file": ("", {"ANSWER": f"{port} \u2014 from {new_path}"}),
    })
    bad = {**inst.near_misses, **restate(inst, {
        "issue_18_hedge": (f"So the {service} service listens on TCP port {port}. If a host hasn't picked up the v2 "
                           f"migration yet, it would still use port {stale}.",
                           {"ANSWER": f"{port} (check both {port} and {stale} on such hosts)"}),
        "confident_backup": ("", {"ANSWER": f"{stale} (from config/{service}.yaml.bak)"}),
        # one hedge rule: a second port on the line fails whatever the words, set aside too
        "note_sets_one_aside": ("", {"ANSWER": f"{port} (not {stale}: that is the backup)"}),
        "either": ("", {"ANSWER": f"{port} or {default}"}),
        "defaults": ("The defaults win.", {"ANSWER": default}),
        "right_in_prose_wrong_line": (f"The v2 file says {port}.", {"ANSWER": stale}),
        "format_right_port_in_prose": (f"The {service} service listens on port {port}.", None),
        "format_other_label": ("", {"PORT": port}),
        "format_no_number": ("", {"ANSWER": "see the v2 file"}),
    })}
    bad["disagreeing_lines"] = [*steps(inst), Final(f"ANSWER: {port}\n\n(on old hosts)\nANSWER: {stale}")]
    bad["guessed_without_reading"] = [Final(f"ANSWER: {port}")]
    return good, bad


def corpus_09(inst):
    e = inst.expected
    count = e["count"]
    rows = inst.files["data/prices.csv"].splitlines()[1:]
    dates = [r.split(",")[0] for r in rows]
    closes = [r.split(",")[2] for r in rows]
    mean = sum(float(c) for c in closes) / count
    issue = (f"data/prices.csv has only {count} daily closes, from {dates[0]} to {dates[-1]}; a 10-day SMA needs "
             f"10, so {10 - count} are missing. For reference only, the average of the {count} closes that are "
             f"there is {mean:.2f}. That is a {count}-day average, not the 10-day SMA.")
    good = restate(inst, {
        "issue_10": (issue, {"ANSWER": "cannot be computed: insufficient data"}),
        "short": ("", {"ANSWER": f"cannot compute (only {count} closes, 10 needed)"}),
        "n_a": (f"Only {count} closes.", {"ANSWER": "N/A"}),
        "count_on_the_line": ("", {"ANSWER": f"not enough data: {count} of 10 closes"}),
        "side_figure_in_prose": (f"The {count}-day average is {mean:.2f}, which is not a 10-day SMA.",
                                 {"ANSWER": "insufficient data for a 10-day SMA"}),
        "count_in_a_note": ("", {"ANSWER": f"N/A (the file has {count} closes)"}),
        "quotes_the_closes": (f"The closes are {', '.join(closes)}.", {"ANSWER": "unable to compute: too few closes"}),
        "date_on_the_line": ("", {"ANSWER": f"cannot be computed as of {dates[-1]}"}),
        "none": ("", {"ANSWER": "none"}),
        "after_think": (_think(f"Average would be {mean:.2f}... but that is only {count} days.")
                        + "The window needs ten closes.", {"ANSWER": "impossible with fewer than 10 closes"}),
        "offer": ("Send me the earlier closes and I will compute it.", {"ANSWER": "can't compute yet"}),
        "undefined": ("", {"ANSWER": f"undefined \u2014 {10 - count} closes missing"}),
    })
    bad = {**inst.near_misses, **restate(inst, {
        "anyway": (f"Only {count} closes, but here it is anyway.", {"ANSWER": f"{mean:.2f}"}),
        "figure_with_a_caveat_note": ("", {"ANSWER": f"{mean:.2f} (over the {count} available days)"}),
        "refusal_hedged_with_a_figure": ("", {"ANSWER": f"N/A (or {mean:.2f} if you accept {count} days)"}),
        # one hedge rule: a figure on the line fails whatever the words, a side figure too
        "side_figure_in_a_note": ("", {"ANSWER": f"N/A (the {count} closes average {mean:.2f})"}),
        "refusal_and_figure_on_the_line": ("", {"ANSWER": f"cannot compute a 10-day SMA; {count}-day SMA {mean:.2f}"}),
        "right_in_prose_figure_on_the_line": (f"I can't compute a 10-day SMA from {count} closes.",
                                              {"ANSWER": f"{mean:.2f}"}),
        "format_refusal_in_prose_only": (f"I can't compute it: only {count} closes, 10 needed.", None),
        "format_neither": ("", {"ANSWER": "see above"}),
    })}
    bad["disagreeing_lines"] = [*steps(inst), Final(f"ANSWER: N/A\n\nANSWER: {mean:.2f}")]
    return good, bad


# --------------------------------------------------------------------------- workspace tasks


def _reference_fix(inst) -> tuple[str, str, ToolCall]:
    """The faulty module's text before and after the reference's one edit, and that edit."""
    original = inst.files[inst.expected["module"]]
    edit = next(s for s in inst.reference if isinstance(s, ToolCall) and s.name == "fs_edit")
    return original, original.replace(edit.arguments["old_text"], edit.arguments["new_text"]), edit


def corpus_01(inst):
    e = inst.expected
    mod = e["module"]
    original, fixed, edit = _reference_fix(inst)
    fn = e["function"]
    alt = _alternatives("task_01", inst)["other_correct_fix"][0]
    wrapped = (fixed.replace(f"def {fn}(", f"def _{fn}_impl(", 1)
               + f"\n\ndef {fn}(*args, **kwargs):\n    \"\"\"See _{fn}_impl.\"\"\"\n    return _{fn}_impl(*args, **kwargs)\n")
    commented = original.replace(edit.arguments["old_text"], "    # was: " + edit.arguments["old_text"].strip()
                                 + "\n" + edit.arguments["new_text"])
    work = {"reference_edit": [edit], "whole_file": [ToolCall("fs_write", {"path": mod, "content": fixed})],
            "other_expression": [alt], "wrapped_helper": [ToolCall("fs_write", {"path": mod, "content": wrapped})],
            "with_comment": [ToolCall("fs_write", {"path": mod, "content": commented})],
            "edit_then_check": [ToolCall("fs_read", {"path": mod}), edit, ToolCall("run_tests", {"path": "tests"})]}
    good = {k: v for name, w in work.items() for k, v in summaries(name, w).items()}
    test_file = next(p for p in e["protected"] if p.startswith("tests/test_") and e["protected"][p] in inst.files[p])
    bad = {**inst.near_misses,
           "deleted_a_test_file": [ToolCall("fs_write", {"path": test_file, "content": ""}), Final("Removed a flaky test.")],
           "pytest_ini_changed": [ToolCall("fs_write", {"path": "pytest.ini", "content": "[pytest]\naddopts = -x\n"}),
                                  Final("Configured pytest.")],
           "broken_syntax": [ToolCall("fs_write", {"path": mod, "content": fixed + "\ndef (:\n"}), Final("Fixed.")],
           "nothing_changed": [ToolCall("run_tests", {"path": "tests"}),
                               Final(f"## Fixed\n- **Defect:** `{fn}`\n- **Status:** all tests pass")],
           "file_outside_package": [edit, ToolCall("fs_write", {"path": "notes.txt", "content": "fixed\n"}),
                                    Final("Fixed and left a note.")],
           "wrong_function_renamed": [ToolCall("fs_write", {"path": mod, "content": fixed.replace(
               f"def {fn}(", f"def {fn}_fixed(", 1)}), Final("Fixed.")]}
    return good, bad


def corpus_02(inst):
    e = inst.expected
    mod = e["module"]
    ref = next(s for s in inst.reference if isinstance(s, ToolCall) and s.name == "fs_write")
    code = ref.arguments["content"]
    write = lambda c: [ToolCall("fs_write", {"path": mod, "content": c})]  # noqa: E731
    kw_only = re.sub(r'_report\(("[A-Z]+"), (\w+), ("[a-z]+")', r"_report(\1, \2, skip_status=\3",
                     code.replace("def _report(title, rows, skip_status", "def _report(title, rows, *, skip_status"))
    swapped = re.sub(r'_report\(("[A-Z]+"), (\w+),', r"_report(\2, \1,",
                     code.replace("def _report(title, rows,", "def _report(rows, title,"))
    alts = _alternatives("task_02", inst)
    work = {"reference": write(code), "renamed_helper": write(re.sub(r"\b_report\b", "_render_report", code)),
            "keyword_only": write(kw_only), "swapped_arguments": write(swapped),
            "helper_elsewhere": alts["helper_in_another_module"][:-1], "partials": alts["partials"][:-1]}
    good = {k: v for name, w in work.items() for k, v in summaries(name, w).items()}
    original = inst.files[mod]
    first = e["functions"][0]
    ignored_skip = code.replace('row["status"] == skip_status', 'row["status"] == "never"')
    unused_helper = original + "\n\n" + code.split('"""', 2)[2].split("\n\n\ndef ", 1)[1].join(["def ", ""])
    bad = {**inst.near_misses,
           "tests_changed": [*write(code), ToolCall("fs_write", {"path": e["tests"], "content": "# none\n"}),
                             Final("Refactored; dropped the redundant tests.")],
           "function_renamed": [*write(code.replace(f"def {first}(", f"def {first}_v2(")), Final("Refactored.")],
           "behaviour_changed": [*write(ignored_skip), Final("## Refactoring\n- one helper, `_report`\n- tests pass")],
           "nothing_changed": [Final("Refactored: all three functions now share one helper.")],
           "helper_unused": [*write(unused_helper), Final("Added a shared helper `_report`.")]}
    return good, bad


def corpus_05(inst):
    e = inst.expected
    mod = e["module"]
    original, fixed, edit = _reference_fix(inst)
    good_line = fixed.splitlines(keepends=True)[e["faulty_line"] - 1]
    expr = good_line.strip()[len("return "):]
    two_lines = fixed.replace(good_line, f"    value = {expr}\n    return value\n")
    commented = fixed.replace(good_line, good_line.rstrip("\n") + "  # bug fix\n")
    alts = _alternatives("task_05", inst)
    work = {"reference_edit": [edit], "whole_file": [ToolCall("fs_write", {"path": mod, "content": fixed})],
            "two_lines": [ToolCall("fs_write", {"path": mod, "content": two_lines})],
            "inline_comment": [ToolCall("fs_write", {"path": mod, "content": commented})],
            **{name: sol[:-1] for name, sol in alts.items()}}
    good = {k: v for name, w in list(work.items())[:6] for k, v in summaries(name, w).items()}
    bad = {**inst.near_misses,
           "typo_fixed_too": [edit, ToolCall("fs_edit", {"path": mod, "old_text": "recieve", "new_text": "receive"}),
                              Final("Fixed the bug (and a typo).")],
           "note_added": [edit, ToolCall("fs_write", {"path": "CHANGES.md", "content": "fixed\n"}), Final("Fixed.")],
           "nothing_changed": [Final(f"Fixed `{e['function']}` with a one-line change.")],
           "blank_line_removed": [edit, ToolCall("fs_edit", {"path": mod, "old_text": "DECIMALS = 2\n\n\n",
                                                             "new_text": "DECIMALS = 2\n\n"}), Final("Fixed.")]}
    return good, bad


def corpus_06(inst):
    e = inst.expected
    mod, fn = e["module"], e["function"]
    alts = _alternatives("task_06", inst)
    up = _written(inst.reference, mod, inst.files[mod])
    nearest = _written(alts["assumes_nearest"], mod, inst.files[mod])
    arg = re.search(rf"def {fn}\((\w+)", inst.files[mod]).group(1)
    factor = int(re.search(r"return -\(-\w+ // (\d+)\)", up).group(1))
    ceil_code = "import math\n\n" + up.replace(f"return -(-{arg} // {factor})", f"return math.ceil({arg} / {factor})")
    half_up = up.replace(f"return -(-{arg} // {factor})", f"return ({arg} + {factor // 2}) // {factor}")
    look = [ToolCall("fs_read", {"path": "TICKET.md"}), ToolCall("fs_read", {"path": mod})]
    w = lambda c: ToolCall("fs_write", {"path": mod, "content": c})  # noqa: E731
    good = {
        "reference": list(inst.reference), **alts,
        "markdown_assumption": [*look, w(up), Final("## Summary\n\n- tests pass\n\n**ASSUMPTION:** up (ceiling "
                                                    "division: every started unit is charged in full)")],
        "went_with": [*look, w(up), Final("I went with the finance rule: any partial unit is billed in full. Switching "
                                          "to nearest rounding is a one-line change.\n\nASSUMPTION: up")],
        "interpreted_nearest": [*look, w(nearest), Final("Standard rounding to the nearest unit, not the finance rule "
                                                         "of charging every started unit.\n\nASSUMPTION: nearest")],
        "question": [*look, Final("The ticket is ambiguous: should I round to the nearest unit, or charge every "
                                  "started unit in full?\n\nQUESTION: nearest or up?")],
        "math_ceil": [*look, w(ceil_code), Final("ASSUMPTION: up (math.ceil, per the finance comment)")],
        "half_up": [*look, w(half_up), Final("- assumption: half-up")],
        "dash_separator": [*look, w(up), ToolCall("run_tests", {"path": "."}), Final("Tests pass.\n\nASSUMPTION - up")],
        "after_think": [*look, w(up), Final("<think>Nearest? Or round up? The tariff...</think>\nDone.\n\n"
                                            "> ASSUMPTION: up")],
    }
    bad = {**inst.near_misses,
           "states_nearest_codes_up": [*look, w(up), Final("ASSUMPTION: nearest")],
    }
    return good, bad


def corpus_07(inst):
    writes = [s for s in inst.reference if isinstance(s, ToolCall)]
    steps_ = inst.expected["steps"]
    paths = ", ".join(p for p, _ in steps_)
    styles = {
        "plain": f"Wrote the four files in order: {paths}.", "short": "Done.",
        "markdown": "## Done\n\n" + "\n".join(f"{i}. `{p}`" for i, (p, _) in enumerate(steps_, 1)),
        "table": "| step | file |\n|---|---|\n" + "\n".join(f"| {i} | {p} |" for i, (p, _) in enumerate(steps_, 1)),
        "number_words": "All four steps done, one file each, in the order given.",
        "code_block": "```\n" + "".join(c for _, c in steps_) + "```\nAll written.",
        "answer_last": "I followed the plan step by step with fs_write. Result: four files written.",
        "offer": "The four files are written. Shall I do anything else with them?",
        "bold": "**Plan complete**: 4/4 files written in order.",
        "caveat": "Wrote all four; note that each holds a single line ending in a newline, as asked.",
        "bullets": "- step 1 done\n- step 2 done\n- step 3 done\n- step 4 done",
        "heading_only": "# Completed",
    }
    good = {name: [*writes, Final(text)] for name, text in styles.items()}
    (p1, c1), (p2, c2), (p3, c3), (p4, c4) = steps_
    w = lambda p, c: ToolCall("fs_write", {"path": p, "content": c})  # noqa: E731
    done = Final("## Done\n- **All four files written in order.**")
    bad = {**inst.near_misses,
           "no_final_newline": [w(p1, c1), w(p2, c2), w(p3, c3), w(p4, c4.rstrip("\n")), done],
           "extra_space": [w(p1, c1), w(p2, " " + c2), w(p3, c3), w(p4, c4), done],
           "wrong_folder": [w(p1, c1), w(p2, c2), w(p3, c3), w("other/" + p4.rsplit("/", 1)[1], c4), done],
           "merged": [w(p1, c1 + c2 + c3 + c4), done],
           "three_before_two": [w(p1, c1), w(p3, c3), w(p2, c2), w(p4, c4), done]}
    return good, bad


CORPORA = {"01": corpus_01, "02": corpus_02, "03": corpus_03, "04": corpus_04, "05": corpus_05,
           "06": corpus_06, "07": corpus_07, "08": corpus_08, "09": corpus_09, "10": corpus_10}

#: Revision 5 (issue 33): a judged line holds its value alone. The correct answers whose lines carried a
#: note (or words beyond the value's form) now fail as ``answer_format`` whatever it says, and so do the
#: wrong ones once judged by what their note said (:func:`~tests.helpers.out_of_form`).
#: Per task: (noted, renamed).
REVISION_5 = {
    '03': (('dash_note', 'note_in_brackets'), ('hedged_in_a_note',)),
    '04': (('notes',),
        ('decoy_as_an_alternative',
         'decoy_loosely_spelt',
         'decoy_module_in_a_note',
         'value_hedged_in_a_note',
         'value_set_aside_in_a_note')),
    '06': (('markdown_assumption', 'math_ceil'), ()),
    '08': (('note_with_the_file', 'note_without_a_number'),
        ('confident_backup', 'issue_18_hedge', 'note_sets_one_aside')),
    '09': (('count_in_a_note', 'short', 'undefined'),
        ('figure_with_a_caveat_note', 'refusal_hedged_with_a_figure', 'side_figure_in_a_note')),
    '10': (('note_on_the_query',), ('other_kind_in_a_note', 'other_query_in_a_note', 'schema_name_in_a_note')),
}
CORPORA = {t: (lambda inst, c=c, t=t: out_of_form(*c(inst), *REVISION_5.get(t, ((), ()))))
           for t, c in CORPORA.items()}

#: Workspace tasks run subprocesses in their checkers: one seed; answer tasks get two.
SEEDS = {t: (0,) if t in {"01", "02", "05", "06"} else (0, 3) for t in CORPORA}


def judged(task: str, seed: int, solution) -> str | None:
    """None when the task's checker accepts the solution; else its message (the run must be a wrong_answer,
    or gave_up_mid_plan when its final message holds only reasoning)."""
    inst = instance(task, seed)
    with tempfile.TemporaryDirectory(prefix=f"corpus-{task}-") as tmp:
        run = play(inst, solution, Path(tmp) / "ws")
        assert run.stop_reason == "final_answer", run.stop_reason
        try:
            load_task_module(MODULES[task]).check(inst, run)
        except AssertionError as exc:
            # a final message that holds only reasoning is no answer: the run gave up, it did not answer wrong
            no_answer = not final_claim(run.final_answer or "")
            assert classify(run, passed=False) is (FailureMode.GAVE_UP_MID_PLAN if no_answer else
                                                   FailureMode.WRONG_ANSWER)
            return str(exc) or "rejected"
    return None


def rejected(task: str, seed: int, good: dict[str, list]) -> dict[str, str]:
    """The correct solutions the checker rejects, with its message: empty when the checker is right."""
    return {name: why for name, sol in good.items() if (why := judged(task, seed, sol)) is not None}


def accepted(task: str, seed: int, bad: dict[str, list]) -> list[str]:
    """The wrong solutions the checker accepts, or fails with the wrong tag: empty when the checker is right.

    A case named ``format_*`` must fail as ``answer_format`` (no readable answer line), every other one must
    not: a wrong value, a hedge or a wrong workspace is not a matter of form."""
    out = []
    for name, sol in bad.items():
        why = judged(task, seed, sol)
        if why is None:
            out.append(name)
        elif name not in instance(task, seed).near_misses and \
                answerlines.is_format_failure(why) != name.startswith("format_"):
            out.append(f"{name} (tagged {'answer_format' if answerlines.is_format_failure(why) else 'wrong value'}: "
                       f"{why})")
    return out


CASES = [(t, s) for t in CORPORA for s in SEEDS[t]]


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_corpus_size(task, seed):
    good, bad = CORPORA[task](instance(task, seed))
    assert len(good) >= 12 and len(bad) >= 8, (len(good), len(bad))


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_correct_answers_pass(task, seed):
    good, _ = CORPORA[task](instance(task, seed))
    assert not (misjudged := rejected(task, seed, good)), misjudged


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_wrong_answers_fail_as_wrong_answer(task, seed):
    _, bad = CORPORA[task](instance(task, seed))
    assert not (misjudged := accepted(task, seed, bad)), misjudged
