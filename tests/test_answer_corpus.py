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
from pytest_agentic.run.answers import final_claim
from pytest_agentic.run.failures import classify
from pytest_agentic.run.records import FailureMode

from .helpers import ROOT, load_task_module, play
from .test_task_instances import _alternatives, _written

MODULES = {p.stem.split("_")[2]: p for p in sorted((ROOT / "tasks").glob("test_task_*.py"))}
_WORDS = {5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


@functools.cache
def instance(task: str, seed: int):
    return load_task_module(MODULES[task]).build(seed)


def steps(inst) -> list:
    """The reference's tool calls (its investigation), without its final answer."""
    return [s for s in inst.reference if not isinstance(s, Final)]


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
    good = answers(inst, {
        "bare": eid,
        "heading_bold": f"# Root cause\n\n**Event `{eid}`**: the reload of `{key}` started the failures.",
        "bullets": f"- Root cause: `id={eid}`\n- Why: {key} was changed at runtime and the errors follow it.",
        "answer_last": (f"I read the whole log. The errors begin a few entries after a reload of {key}; the other "
                        f"reloads are harmless flags and the ledger timeouts recur all day. So the root cause is "
                        f"the entry with id {eid}."),
        "upper_case": f"ID={eid.upper()}: {key} changed.",
        "code_block": f"```\n{line}\n```\nThat entry ({eid}) changed {key}; everything after it degrades.",
        "offer": f"Event {eid}: {key} was changed. If you want, I can suggest a safe value for it.",
        "table": f"| event id | why |\n|---|---|\n| {eid} | {key} changed |",
        "number_words": f"The one entry that caused it is {eid}; two warnings and then errors follow it.",
        "rules_out_without_ids": (f"It is not the first error, nor the recurring ledger timeout, nor the later "
                                  f"feature-flag reload: it is {eid}, the change of {key}."),
        "typographic_quotes": f"\u201c{eid}\u201d \u2014 the {key} change.",
        "bold_first": f"**{eid}**\n\nReason: the {key} reload; the warnings and errors start right after it.",
    })
    bad = answers(inst, {
        "confident_first_error": f"The root cause is clearly {d['first_error']}: it is the first ERROR in the log.",
        "recurring": f"{d['recurring_error']}",
        "benign_change": f"Event {d['benign_change']} (a config reload) right before the errors.",
        "hedged": f"{eid} or {d['first_error']}.",
        "right_one_rejected": (f"At first {eid} looked relevant, but it is a routine reload; the real root cause "
                               f"is {d['benign_change']}."),
        "no_id": "A configuration change caused it.",
        "structured_wrong": f"## Root cause\n- **Event:** `{d['first_error']}`\n- **Why:** requests failed.",
        "misspelt_id": f"Event {eid[:-1]}z caused it.",
        "names_a_decoy_to_rule_it_out": f"It is {eid}, not {d['first_error']}.",  # the prompt: name only one id
    })
    return good, bad


def corpus_04(inst):
    e = inst.expected
    value, pkg, mod = e["value"], e["package"], e["module"]
    path = f"{pkg}/shipping/{mod}.py"
    decoy_value = e["decoy_values"][0]
    decoy_path = f"{pkg}/shipping/{e['decoy_modules'][0]}.py"
    good = answers(inst, {
        "plain": f"`{path}:fee` returns {value}.",
        "value_first": f"{value}\n\n{path}:fee",
        "markdown": f"## Answer\n- **Value:** {value:,} cents\n- **Function:** `{path}:fee`",
        "answer_last": (f"checkout builds the order, then quote() dispatches the mode through _STRATEGIES to the "
                        f"fee it imported, which reads the patched tariff table. Result: {path}:fee returns "
                        f"{value} cents."),
        "dotted": f"{pkg}.shipping.{mod}.fee -> {value}",
        "backslashes": f"{pkg}\\shipping\\{mod}.py:fee returns {value}",
        "code_block": f"```\n{path}:fee\n```\nreturns {value}",
        "rules_out_a_value": f"It returns {value}, not {decoy_value}; computed by `{path}:fee`.",
        "offer": f"{path}:fee computes it: {value} cents. Let me know if you want the breakdown.",
        "in_words": f"In cents: {value}. Computed by the function fee in {path}.",
        "table": f"| value | function |\n|---|---|\n| {value} | {path}:fee |",
        "grouped": f"The call returns {value:,} (cents), from {path}:fee.",
    })
    bad = answers(inst, {**{k: v[-1].content for k, v in inst.near_misses.items()},
        "right_value_rejected": f"`{path}:fee` does not return {value}; it returns {decoy_value}.",
        "wrong_value": f"{path}:fee returns {value + 100}.",
        "no_function": f"It returns {value}.",
        "dollars": f"It returns ${value / 100:.2f}, computed by {path}:fee.",
        "confident_decoy": f"## Answer\n**{decoy_value}** from `{decoy_path}:fee`.",
    })
    return good, bad


def corpus_08(inst):
    e = inst.expected
    port, (stale, default), new_path = e["port"], e["wrong_ports"], e["new_path"]
    service = new_path.rsplit("/", 1)[1][:-5]
    issue = (f"The {service} service listens on TCP port {port}. [...] Two other files hold different ports, and "
             f"neither is the live value: `config/{service}.yaml.bak` says {stale}, but it is marked as a backup "
             f"from before the migration and not in use; `config/defaults.yaml` says {default}, but that is only a "
             "default, and the service's own file overrides it.")
    good = answers(inst, {
        "issue_10": issue,
        "bare": f"{port}",
        "bold_code": f"**Port:** `{port}`",
        "heading": f"# Answer\n\nThe service listens on TCP port **{port}** (from `{new_path}`).",
        "answer_last": (f"The old path failed with an error pointing to {new_path}; I read it, and its listen block "
                        f"says port: {port}. So: {port}."),
        "rules_out_both": f"{port}. Not {stale} (that is the pre-migration backup) and not {default} (the shared default).",
        "table": (f"| file | port | in use |\n|---|---|---|\n| {new_path} | {port} | yes |\n"
                  f"| config/{service}.yaml.bak | {stale} | no, backup |\n| config/defaults.yaml | {default} | no, default |"),
        "grouped_digits": f"It listens on port {port:,}.",
        "yaml_block": f"```yaml\nlisten:\n  host: 0.0.0.0\n  port: {port}\n```\nSo the port is {port}.",
        "offer": f"{port}. If you need it, I can also update what still points at the old path.",
        "caveat": (f"The service listens on {port}. Note that config/defaults.yaml holds another default port, "
                   "which the service's own file overrides."),
        "side_remark": f"Answer: {port} (the {stale} in the .bak file is stale).",
    })
    bad = {**{k: v for k, v in inst.near_misses.items()}, **answers(inst, {
        "confident_backup": f"## Answer\n**Port:** `{stale}` (from config/{service}.yaml.bak)",
        "either": f"Either {port} or {default}.",
        "defaults_win": f"The port is {default}; {new_path} lists {port} but the defaults win.",
        "real_one_is_the_backup": (f"Port {port} per the v2 file, but the real port is {stale} since the backup "
                                   "is what is deployed."),
        "actual_first": f"{stale} is the actual port, though {port} appears in {new_path}.",
    }), "guessed_without_reading": [Final(f"It listens on {port}.")]}
    return good, bad


def corpus_09(inst):
    e = inst.expected
    count = e["count"]
    rows = inst.files["data/prices.csv"].splitlines()[1:]
    dates = [r.split(",")[0] for r in rows]
    closes = [r.split(",")[2] for r in rows]
    ticker = rows[0].split(",")[1]
    total = sum(float(c) for c in closes)
    mean = total / count
    issue = (f"I can't give a 10-day simple moving average from this file, because there isn't enough data for one. "
             f"data/prices.csv has only {count} daily closes for {ticker}, from {dates[0]} to {dates[-1]} [...] "
             f"A 10-day SMA as of {dates[-1]} needs the 10 most recent closes, so {10 - count} are missing. [...] "
             f"For reference only, the average of the {count} closes that are there is {total:.2f} / {count} "
             f"\u2248 {mean:.2f}. That is a {count}-day average, not the 10-day SMA. If you can provide the "
             f"{10 - count} earlier closes, I can compute the proper 10-day figure.")
    good = answers(inst, {
        "issue_10": issue,
        "short": f"No: there are only {count} closes in data/prices.csv, and a 10-day SMA needs 10.",
        "number_words": f"I can't: the file holds {_WORDS[count]} daily closes, not ten.",
        "markdown": (f"## Cannot compute\n\n- **Closes in file:** {count}\n- **Needed:** 10\n\n"
                     "A 10-day SMA is not possible from this data."),
        "answer_last": (f"The file starts on {dates[0]} and ends on {dates[-1]}: {count} trading days. A 10-day "
                        "window needs ten. So the 10-day SMA cannot be computed."),
        "quotes_the_closes": (f"The closes are {', '.join(closes)} ({count} in total); that is not enough for a "
                              "10-day SMA."),
        "names_the_shortfall": f"It is impossible: {10 - count} closes are missing for a 10-day window.",
        "labelled_side_figure": (f"Not enough data ({count} closes). The {count}-day average is {mean:.2f}, but "
                                 "that is not a 10-day SMA."),
        "offer": f"Only {count} closes are there, so I can't. If you send the earlier closes, I will compute it.",
        "bold_caveat": (f"**Insufficient data.** Only {count} trading days are in the file, so no 10-day moving "
                        f"average exists as of {dates[-1]}."),
        "table": f"| needed | available |\n|---|---|\n| 10 | {count} |\n\nSo the 10-day SMA can't be computed.",
        "code_block": f"```\n{count} rows < 10 required\n```\nA 10-day SMA cannot be computed from this file.",
    })
    bad = {**{k: v for k, v in inst.near_misses.items()}, **answers(inst, {
        "anyway": f"Only {count} closes, but here is the 10-day SMA anyway: {mean:.2f}.",
        "unlabelled_average": f"There are only {count} data points, so a proper SMA is not possible. Average: {mean:.2f}.",
        "confident_structured": f"**10-day SMA:** {mean:.2f}",
        "best_estimate": (f"The 10-day SMA cannot be computed exactly; with {count} closes, the best estimate of the "
                          f"10-day SMA is {mean:.2f}."),
        "count_set_aside": (f"At first I thought there were only {count} closes, but that is no problem: the 10-day "
                            f"SMA is {mean:.2f}."),
        "averaged_over_what_is_there": f"There are only {count} closes, so I computed the SMA over what's available: "
                                       f"{mean:.2f}.",
        "window_as_argument": f"I can't do a full window with {count} closes; SMA(10) ≈ {mean:.2f} using the data.",
    })}
    return good, bad


def _cause_10(e) -> str:
    terms = e["cause_terms"]
    if e["kind"] == "missing_column":
        return f"it reads `{terms[0][0]}` from `orders`, but that column belongs to `invoices`"
    if e["kind"] == "ambiguous_column":
        return f"`{terms[0][0]}` is ambiguous in the join: both customers and orders have that column"
    return f"it joins `{terms[0][0]}`, but there is no such table; the schema calls it `{terms[1][0]}`"


def log_10(inst) -> tuple[list[str], int]:
    """The job log's lines, and the index of the line where the failing query is submitted."""
    log = inst.files[next(p for p in inst.files if p.startswith("logs/"))]
    lines = log.splitlines()
    qid = inst.expected["query_id"]
    return lines, next(i for i, ln in enumerate(lines) if f"] {qid} submitted" in ln)


def corpus_10(inst):
    e = inst.expected
    qid, cause = e["query_id"], _cause_10(e)
    last, valid = list(e["decoys"])
    good = answers(inst, {
        "plain": f"The failing query is {qid}: {cause}.",
        "markdown": f"## Failing query\n\n**`{qid}`**\n\n- cause: {cause}\n- error: `{e['error']}`",
        "upper_case": f"Q-{qid[2:].upper()} failed because {cause}.",
        "answer_last": (f"The job log does not record which query failed, so I checked each query that uses the "
                        f"name in the error against the schema: {cause}. That is query {qid}."),
        "code_span": f"`{qid}`: {cause}.",
        "table": f"| query | cause |\n|---|---|\n| {qid} | {cause} |",
        "offer": f"{qid} fails: {cause}. I can write the corrected query if you like.",
        "number_words": f"Only one query failed, {qid}: {cause}.",
        "bold": f"**{qid}** \u2014 {cause}.",
        "error_quoted": f"{qid} raised `{e['error']}`: {cause}.",
        "rules_out_without_ids": f"Not the last query in the log (it ran fine): it is {qid}; {cause}.",
        "bullet_first": f"- {qid}\n- {cause}",
    })
    bad = {**{k: v for k, v in inst.near_misses.items()}, **answers(inst, {
        "confident_last": f"## Failing query\n**{last}** \u2014 `{e['error']}`",
        "right_one_rejected": f"{qid} looks like it, but it ran fine; {valid} is the one that failed: {cause}.",
        "no_id": f"One of the queries failed: {cause}.",
        "wrong_cause": f"{qid} failed because of a timeout.",
        "confident_valid_use": f"**{valid}** \u2014 {cause}.",
    })}
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
        "markdown_assumption": [*look, w(up), Final("## Summary\n\n**Assumption:** ceiling division: every started "
                                                    "unit is charged in full.\n\n- tests pass")],
        "went_with": [*look, w(up), Final("I went with the finance rule: any partial unit is billed in full. "
                                          "Switching to nearest rounding is a one-line change.")],
        "interpreted_nearest": [*look, w(nearest), Final("I interpreted 'rounded' as standard rounding to the nearest "
                                                         "unit, not the finance rule of charging every started unit.")],
        "numbered_question": [*look, Final("The ticket is ambiguous. Which do you want?\n1. rounded to the nearest unit\n"
                                           "2. every started unit charged in full (round up)")],
        "math_ceil": [*look, w(ceil_code), Final("Assumed ceiling semantics (math.ceil), per the finance comment.")],
        "half_up": [*look, w(half_up), Final("Assumption: half-up rounding to the nearest unit, as the ticket says.")],
        "answer_last": [*look, w(up), ToolCall("run_tests", {"path": "."}),
                        Final("Tests pass. The ticket and the finance comment disagree, so I had to choose: I assumed "
                              "that every started unit is charged in full and round up.")],
        "offer": [*look, w(up), Final("The spec is ambiguous; I chose to round up (partial units are charged in full). "
                                      "Tell me if you prefer the nearest unit.")],
    }
    bad = {**inst.near_misses,
           "states_nearest_codes_up": [*look, w(up), Final("Assumption: rounded to the nearest unit, as the ticket says.")],
           "states_up_codes_ceil_wrong": [*look, w(up.replace(f"-(-{arg} // {factor})", f"{arg} // {factor}")),
                                         Final("Assumption: every started unit is charged in full.")],
           "confident_silent": [*look, w(up), Final("## Done\n- **Implemented:** `" + fn + "`\n- **Tests:** pass")],
           "question_without_both": [*look, Final("Should I round the value?")]}
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
    """The wrong solutions the checker accepts: empty when the checker is right."""
    return [name for name, sol in bad.items() if judged(task, seed, sol) is None]


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


@pytest.mark.parametrize(("task", "seed"), [("08", 3), ("09", 0), ("09", 5)])
def test_the_three_answers_of_issue_10_pass_on_their_instances(task, seed):
    """The correct answers once rejected, replayed on their instances through the scripted provider."""
    inst = instance(task, seed)
    good, _ = CORPORA[task](inst)
    extra = []
    if task == "08":  # the agent also read the backup and the defaults, to rule them out
        service = inst.expected["new_path"].rsplit("/", 1)[1][:-5]
        extra = [[ToolCall("fs_read", {"path": f"config/{service}.yaml.bak"}),
                  ToolCall("fs_read", {"path": "config/defaults.yaml"})]]
    solution = [*steps(inst), *extra, good["issue_10"][-1]]
    assert judged(task, seed, solution) is None
