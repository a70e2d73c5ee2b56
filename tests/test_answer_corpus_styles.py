"""Answers in the styles that slip past hand-written rules, judged by the task's checker (revision 3).

Reasoning-model output (a ``<think>`` block that weighs every candidate and even writes an answer
line before the real one, or a reasoning block whose opening tag was in the chat template), LaTeX
(``\\boxed{}``), HTML tags, Markdown tables whose other rows are ruled out, quoted log lines and
SQL holding other ids, numbers with separators and units, terse lowercase answers and very long
answers that restate the task: the prose is free, and the answer lines are read through their
markup. The wrong ones list every candidate on the line (shotgun), put a wrong value in LaTeX or
HTML, or never leave their reasoning block (no line: ``format_*``).
"""

from __future__ import annotations

import json
import re

import pytest

from pytest_agentic import Final, ToolCall

from .helpers import close, out_of_form, restate, think as _think
from .corpus_10 import _cause_10, lines_10, log_10
from .test_answer_corpus import accepted, instance, rejected

_FILLER = ("I started by listing the workspace and reading every file the task mentions, then re-read the "
           "relevant parts to make sure nothing was missed. ")


def styles_03(inst):
    e = inst.expected
    eid, key, d = e["event_id"], e["key"], e["decoys"]
    log = inst.files[next(iter(inst.files))].splitlines()
    at = next(i for i, ln in enumerate(log) if f"id={eid}" in ln)
    quoted = "\n".join(log[at:at + 8])
    every = ", ".join([eid, *d.values()])
    good = close(inst, {
        "think_block": _think(f"Candidates: {every}. {d['first_error']} is the first error, a symptom. "
                              f"{d['recurring_error']} recurs all day. {d['benign_change']} is a harmless flag. "
                              f"So {eid}.") + f"The root cause is {eid}: {key} was changed.",
        "thinking_tag": f"<thinking>maybe {d['benign_change']}? no, harmless.</thinking>\n{eid} ({key} change)",
        "template_opened_think": f"Let me weigh {d['first_error']} and {d['benign_change']}...\n</think>\n\n**{eid}**",
        "html_bold": f"Root cause: <b>{eid}</b><br>The {key} reload started the failures.",
        "latex_boxed": f"The root cause is the {key} reload. $\\boxed{{\\text{{{eid}}}}}$",
        "quoted_log_block": (f"The failures start right after this entry:\n\n```\n{quoted}\n```\n\nRoot cause: {eid}, "
                             f"the {key} change; the warnings and errors below it are its consequences."),
        "terse_lowercase": f"{eid} {key} change broke it",
        "asserted_with_negated_aside": f"{eid} didn't log an error itself, but it caused the incident: {key} changed.",
        "not_the_first_error_after": f"It's {eid} and not the first error: the {key} change came first.",
        "most_likely": f"Most likely {eid}: {key} was changed right before the warnings start.",
        "long_restating": ("You asked me to find the root-cause entry in the log and reply with its event id and one "
                           "sentence on why. " + _FILLER * 30 + f"\n\nRoot cause: {eid} ({key} was changed)."),
        "answer_tag": f"<answer>{eid}</answer>",
        "think_with_a_draft_line": _think(f"ANSWER: {d['first_error']}? No: that is a symptom."),
    }, {"ANSWER": eid})
    good.update(restate(inst, {"html_line": ("", {"ANSWER": f"<b>{eid}</b>"}),
                               "latex_line": ("", {"ANSWER": f"$\\boxed{{\\text{{{eid}}}}}$"})}))
    bad = restate(inst, {
        "rejects_the_right_one": (f"It's not {eid}; the database is the cause.", {"ANSWER": d["recurring_error"]}),
        "shotgun": ("", {"ANSWER": every}),
        "think_then_wrong": (_think(f"ANSWER: {eid}"), {"ANSWER": d["first_error"]}),
        "html_wrong": ("", {"ANSWER": f"<b>{d['benign_change']}</b>"}),
        "format_think_only_unterminated": (f"<think>\nThe cause is probably {eid}.\nANSWER: {eid}\nLet me check", None),
        "format_quotes_several_lines_none": (f"```\n{quoted}\n```", None),
        "format_empty_after_think": (_think(f"ANSWER: {eid}") + "   ", None),
        "format_answer_tag_only": (f"<answer>{eid}</answer>", None),
    })
    return good, bad


def _denied_10(e) -> str:
    """The cause in a sentence whose negation is about the name, not the query (free prose)."""
    name = e["error"].rsplit(": ", 1)[1]
    if e["kind"] == "missing_column":
        return f"the orders table does not have a {name} column (only invoices does)"
    if e["kind"] == "ambiguous_column":
        return f"the WHERE clause does not qualify {name}, and both joined tables have it"
    return f"table {name} does not exist in the schema"


def styles_10(inst):
    e = inst.expected
    qid, cause = e["query_id"], _cause_10(e)
    last, valid = list(e["decoys"])
    lines, at = log_10(inst)
    block = "\n".join(lines[max(1, at - 2):at + 4])
    every = ", ".join([qid, last, valid])
    good = close(inst, {
        "think_block": _think(f"The error names no query. Candidates: {every}. {last} is just the last one logged; "
                              f"{valid} uses the name validly.") + f"The failing query is {qid}: {cause}.",
        "template_opened_think": f"{valid}? no, it is valid. {last}? ran fine.\n</think>\n{qid}: {cause}.",
        "quoted_log_block": (f"The relevant part of the log:\n\n```\n{block}\n```\n\nThe failing query is {qid}: "
                             f"{cause}."),
        "html": f"<p>Failing query: <code>{qid}</code></p><p>Cause: {cause}.</p>",
        "latex_boxed": f"$\\boxed{{\\texttt{{{qid}}}}}$ \u2014 {cause}.",
        "terse_lowercase": f"{qid} {cause}",
        "table_others_ruled_out": (f"| query | status |\n|---|---|\n| {qid} | **failed**: {cause} |\n"
                                   "| the other queries | ran fine |"),
        "not_a_lock": f"{qid} failed. It is not a lock or a timeout: {cause}.",
        "error_message_and_cause": f"{qid} raised `{e['error']}` because {cause}.",
        "long_restating": ("You asked me to find the query that failed in last night's job and explain why. "
                           + _FILLER * 30 + f"\n\nAnswer: {qid}. Cause: {cause}."),
        "json_in_fence": "```json\n" + json.dumps({"query_id": qid, "cause": cause}, indent=2) + "\n```",
        "answer_tag": f"<answer>{qid}</answer> {cause}.",
        "negation_after_colon": f"{qid}: {_denied_10(e)}.",
        "which_does_not": f"{qid} uses {e['error'].rsplit(' ', 1)[1]}, which does not work here: {cause}.",
    }, lines_10(e))
    good.update(restate(inst, {
        "kind_with_a_dash": ("", lines_10(e, CAUSE=e["kind"].replace("_", "-"))),
        "html_lines": ("", lines_10(e, QUERY=f"<code>{qid}</code>", CAUSE=f"<em>{e['kind']}</em>")),
    }))
    bad = restate(inst, {
        "wrong_cause_same_names": ("", lines_10(e, NAMES=", ".join(n.replace("orders.", "customers.") if "." in n
                                                                   else f"orders.{n}" for n in e["names"]))),
        "format_cause_a_sentence": ("", lines_10(e, CAUSE=f"it timed out while reading `{e['names'][0]}`")),
        "format_negation_on_the_cause_line": ("", lines_10(e, CAUSE=_denied_10(e))),
        "shotgun": ("", lines_10(e, QUERY=every)),
        "think_then_wrong": (_think(f"QUERY: {qid}"), lines_10(e, QUERY=valid)),
        "latex_wrong": ("", lines_10(e, QUERY=f"$\\boxed{{\\texttt{{{last}}}}}$")),
        "format_think_only_unterminated": (f"<think>\nQUERY: {qid}\nCAUSE: {e['kind']}\nLet me double-check", None),
        "format_quotes_block_names_none": (f"```\n{block}\n```\n{cause}.", None),
        "format_lines_in_json": ("```json\n" + json.dumps(lines_10(e), indent=2) + "\n```", None),
    })
    return good, bad


def _tables(inst) -> str:
    """rates.py as an agent quotes it: every tariff, so the other strategy's fee too."""
    return inst.files[f"{inst.expected['package']}/rates.py"].split('"""', 2)[2].strip()


def styles_04(inst):
    e = inst.expected
    value, pkg, mod = e["value"], e["package"], e["module"]
    path = f"{pkg}/shipping/{mod}.py"
    other, decoy = e["decoy_values"]
    call = e["call"]
    good = close(inst, {
        "think_block": _think(f"Could it be {other} or {decoy}? The module named after the mode is never imported; "
                              f"the dispatch table maps the mode elsewhere. So {value}.")
        + f"It returns {value} cents, computed by `{path}:fee`.",
        "template_opened_think": f"maybe {decoy}... no.\n</think>\n**{value}** \u2014 `{path}:fee`",
        "latex_boxed": f"The fee is computed by `{path}:fee`.\n\n$$\\boxed{{{value}}}$$",
        "latex_inline": f"`{path}:fee` returns ${value}$ cents.",
        "answer_bold_code": f"**Answer:** `{value}` (cents), from `{path}:fee`",
        "html": f"<b>{value}</b> cents<br>computed by <code>{path}:fee</code>",
        "table_ruled_out": (f"| candidate | value | verdict |\n|---|---|---|\n| `{path}:fee` | {value} | \u2705 returned |\n"
                            f"| the module named after the mode | {decoy} | \u274c never imported |\n"
                            f"| the other strategy | {other} | \u274c not this mode |"),
        "separator_and_unit": f"{value:,} cents (${value / 100:,.2f}), computed by {path}:fee.",
        "terse_lowercase": f"{value} {path}:fee",
        "long_restating": (f"You asked what `{pkg}.api.checkout({call['items']!r}, \"{call['region']}\", "
                           f"mode=\"{call['mode']}\")` returns and which function computes it. "
                           + _FILLER * 30 + f"\n\nIt returns {value} cents, computed by `{path}:fee`."),
        "cents_word_after_equals": f"fee = {value}\u00a2 \u2192 `{path}:fee`",
        "answer_tag": f"<answer>{value}</answer> computed by {path}:fee",
        "quoted_tables": (f"The tariffs in rates.py:\n\n```python\n{_tables(inst)}\n```\n\n`{path}:fee` reads the "
                          f"patched table and returns {value} cents."),
    }, {"VALUE": value, "FUNCTION": f"{path}:fee"})
    good.update(restate(inst, {
        "latex_value": ("", {"VALUE": f"$\\boxed{{{value}}}$", "FUNCTION": f"{path}:fee"}),
        "html_value": ("", {"VALUE": f"<b>{value:,}</b> cents", "FUNCTION": f"<code>{path}:fee</code>"}),
    }))
    bad = restate(inst, {
        "shotgun_values": ("", {"VALUE": f"one of {value}, {other} or {decoy}", "FUNCTION": f"{path}:fee"}),
        "think_then_wrong": (_think(f"VALUE: {value}"), {"VALUE": decoy, "FUNCTION": f"{path}:fee"}),
        "boxed_wrong": ("", {"VALUE": f"$\\boxed{{{other}}}$", "FUNCTION": f"{path}:fee"}),
        "html_wrong": ("", {"VALUE": f"<b>{decoy}</b>", "FUNCTION": f"{path}:fee"}),
        "two_functions": ("", {"VALUE": value, "FUNCTION": f"{path}:fee, {pkg}/shipping/__init__.py:quote"}),
        "format_think_only_unterminated": (f"<think>\nVALUE: {value}\nFUNCTION: {path}:fee\nLet me verify", None),
        "format_dollars_only_latex": ("", {"VALUE": f"$\\${value / 100:.2f}$", "FUNCTION": f"{path}:fee"}),
        "format_empty_after_think": (_think(f"VALUE: {value}\nFUNCTION: {path}:fee"), None),
    })
    return good, bad


def styles_08(inst):
    e = inst.expected
    port, (stale, default), new_path = e["port"], e["wrong_ports"], e["new_path"]
    service = new_path.rsplit("/", 1)[1][:-5]
    good = close(inst, {
        "think_block": _think(f"The backup says {stale}, the defaults say {default}, the v2 file says {port}. "
                              f"Maybe {stale}? No, the backup is not in use.") + f"The {service} service listens on port {port}.",
        "template_opened_think": f"{stale} or {default} or {port}?\n</think>\n{port}",
        "latex_boxed": f"$\\boxed{{{port}}}$",
        "answer_bold_code": f"**Answer:** `{port}`",
        "html": f"Port: <b>{port}</b><br>(from {new_path})",
        "separator": f"It listens on port {port:,}.",
        "table_ruled_out": (f"| file | port | used |\n|---|---|---|\n| {new_path} | {port} | **yes** |\n"
                            f"| config/{service}.yaml.bak | {stale} | no (backup) |\n| config/defaults.yaml | {default} | "
                            "no (overridden) |"),
        "quoted_files": (f"```yaml\n# config/{service}.yaml.bak\nport: {stale}\n```\nThat backup is not in use. "
                         f"The live file {new_path} says port {port}, so the port is {port}."),
        "terse_lowercase": f"port {port}",
        "long_restating": (f"You asked which TCP port the {service} service listens on. " + _FILLER * 30
                           + f"\n\nThe port is {port}."),
        "answer_tag": f"<answer>{port}</answer>",
        "tcp_unit": f"{port}/tcp",
    }, {"ANSWER": port})
    good.update(restate(inst, {"latex_line": ("", {"ANSWER": f"$\\boxed{{{port}}}$"}),
                               "html_line": ("", {"ANSWER": f"<b>{port}</b>"})}))
    bad = restate(inst, {
        "shotgun": ("", {"ANSWER": f"one of {port}, {stale} and {default}"}),
        "think_then_wrong": (_think(f"ANSWER: {port}"), {"ANSWER": stale}),
        "boxed_wrong": ("", {"ANSWER": f"$\\boxed{{{default}}}$"}),
        "html_wrong": ("", {"ANSWER": f"<b>{stale}</b>"}),
        "confidence_note": ("", {"ANSWER": f"{port} (high confidence; {stale} also possible)"}),
        "format_think_only_unterminated": (f"<think>\nANSWER: {port}\nLet me check the backup too", None),
        "format_empty_after_think": (_think(f"ANSWER: {port}"), None),
        "format_boxed_only": (f"$\\boxed{{{port}}}$", None),
    })
    return good, bad


def styles_09(inst):
    e = inst.expected
    count = e["count"]
    rows = inst.files["data/prices.csv"].splitlines()[1:]
    last = rows[-1].split(",")[0]
    mean, padded, last5 = e["computed_values"]
    good = close(inst, {
        "padding_would_give": (f"I can't compute a 10-day SMA: the file has only {count} closes. Padding with zeros "
                               f"would give {padded:.2f}, which is meaningless."),
        "padding_10_day_meaningless": (f"Not possible with {count} closes. If the missing days were treated as zero, "
                                       f"the 10-day SMA would come out at {padded:.2f}, but that number is misleading."),
        "json_null_with_count": json.dumps({"sma10": None, "closes": count, "reason": f"only {count} closes"}),
        "json_insufficient": json.dumps({"sma_10": "insufficient data"}),
        "think_block": _think(f"Average of {count} closes = {mean:.2f}; padded = {padded:.2f}. Neither is a 10-day SMA.")
        + f"I can't compute the 10-day SMA: there are only {count} closes.",
        "template_opened_think": f"mean {mean:.2f}? not 10 days.\n</think>\nNot enough data: {count} closes, 10 needed.",
        "html": f"<b>Cannot compute</b><br>Only {count} closes in data/prices.csv; a 10-day SMA needs 10.",
        "latex": f"$\\text{{SMA}}_{{10}}$ is undefined: $n = {count} < 10$.",
        "terse_lowercase": f"cant compute only {count} closes need 10",
        "not_enough_data_only": "Not enough data for a 10-day SMA.",
        "long_restating": ("You asked for the 10-day simple moving average of the close as of the last day in "
                           "data/prices.csv. " + _FILLER * 30 + f"\n\nThere are only {count} closes, so I can't."),
        "table_na": f"| metric | value |\n|---|---|\n| closes | {count} |\n| 10-day SMA | N/A |",
    }, {"ANSWER": "N/A"})
    good.update(restate(inst, {
        "latex_line": ("", {"ANSWER": f"$\\text{{undefined}}$ ($n = {count} < 10$)"}),
        "html_line": ("", {"ANSWER": "<b>cannot compute</b>"}),
    }))
    bad = restate(inst, {
        "think_then_value": (_think("ANSWER: N/A"), {"ANSWER": f"{mean:.2f}"}),
        "boxed_value": (f"Only {count} closes.", {"ANSWER": f"$\\boxed{{{mean:.2f}}}$"}),
        "html_value": ("", {"ANSWER": f"<b>{mean:.2f}</b>"}),
        "padded_value": (f"Padding with zeros gives {padded:.2f}, which is meaningless.", {"ANSWER": f"{padded:.2f}"}),
        "last_five": ("", {"ANSWER": f"{last5:.2f} (5-day)"}),
        "format_think_only_unterminated": (f"<think>\nOnly {count} closes.\nANSWER: N/A\nLet me", None),
        "format_json_only": (json.dumps({"sma_10": None, "reason": "insufficient data"}), None),
        "format_empty_after_think": (_think(f"only {count} closes"), None),
    })
    bad["insufficient_unread"] = [Final("Insufficient data.\n\nANSWER: N/A")]
    return good, bad


def styles_06(inst):
    """Whole solutions (task_06 is judged by the workspace too): reasoning blocks, HTML, LaTeX on the rule line."""
    from .test_answer_corpus_workspace import _w
    from .test_task_instances import _written

    e = inst.expected
    mod = e["module"]
    unit = e["readings"]["up"].split()[2]
    up = _written(inst.reference, mod, inst.files[mod])
    near = re.sub(r"return -\(-(\w+) // (\d+)\)", lambda m: f"return ({m[1]} + {int(m[2]) // 2}) // {m[2]}", up)
    look = [ToolCall("fs_read", {"path": "TICKET.md"}), ToolCall("fs_read", {"path": mod})]
    u, n = [*look, _w(mod, up)], [*look, _w(mod, near)]
    weigh = (f"Nearest {unit} or every started {unit}? The ticket says nearest, finance says round up. "
             "I could ask, or pick one.")
    good = {
        "literally": [*n, Final(f"The ticket and the finance comment disagree; I interpreted the ticket literally."
                                "\n\nASSUMPTION: nearest")],
        "half_up_said_and_coded": [*n, Final("ASSUMPTION: nearest, half-up")],
        "as_written": [*n, Final(f"Ambiguous (nearest vs every started {unit}).\nASSUMPTION: `nearest`")],
        "think_then_assumption": [*u, Final(_think(weigh + " ASSUMPTION: nearest?") + "ASSUMPTION: up (per the "
                                                                                       "tariff)")],
        "think_then_question": [*look, Final(_think(weigh + " I'll ask.") + "QUESTION: nearest or up?")],
        "template_opened_think": [*n, Final(f"{weigh}\n</think>\nASSUMPTION: nearest")],
        "html": [*u, Final("<p><b>ASSUMPTION:</b> up</p>")],
        "long_restating": [*u, Final("You asked me to implement the ticket in TICKET.md. " + _FILLER * 30
                                     + "\n\nASSUMPTION: up")],
        "terse_lowercase": [*u, Final("assumption - up")],
        "equals_sign": [*u, Final("ASSUMPTION = UP")],
        "latex_ceiling": [*u, Final(f"Every started {unit} rounds up: $\\lceil x / k \\rceil$.\n\nASSUMPTION: "
                                    "$\\text{up}$")],
        "reasoning_tag": [*n, Final(f"<reasoning>{weigh}</reasoning>\nASSUMPTION: **nearest**")],
    }
    bad = {
        "nearest_said_coded_up": [*u, Final("ASSUMPTION: nearest")],
        "format_think_only_assumption": [*u, Final(f"<think>\n{weigh}\nASSUMPTION: up\nLet me write it")],
        "format_assumption_only_in_think": [*u, Final(_think("ASSUMPTION: up") + "Implemented. Tests pass.")],
        "format_question_only_in_think": [*look, Final(_think("QUESTION: nearest or up?") + "Done.")],
        "think_then_names_both": [*u, Final(_think(weigh) + "ASSUMPTION: nearest and up")],
        "html_wrong_reading": [*u, Final("<b>ASSUMPTION:</b> nearest")],
        "format_no_rule_word": [*u, Final(f"ASSUMPTION: every started {unit} is charged in full (ceiling).")],
        "shotgun_both": [*u, Final("ASSUMPTION: nearest or up; the code does one of them.")],
        "shotgun_both_nearest_code": [*n, Final("ASSUMPTION: up / nearest")],
    }
    return good, bad


#: Revision 5 (issue 33): a judged line holds its value alone; these lines carried a note (or words beyond the
#: value's form) and now fail as ``answer_format`` whatever it says (:func:`~tests.helpers.out_of_form`).
#: Per task: (noted, renamed).
REVISION_5 = {
    '06': (('think_then_assumption',), ()),
    '08': ((), ('confidence_note',)),
    '09': (('latex_line',), ('last_five',)),
}


def _solutions(inst, task: str) -> tuple[dict, dict]:
    return out_of_form(*globals()[f"styles_{task}"](inst), *REVISION_5.get(task, ((), ())))


#: Seeds that cover each task's variants (task_10: the three kinds of failure).
SEEDS = {"03": (0, 3), "04": (0, 1, 3), "06": (0,), "08": (0, 3), "09": (0, 1, 3), "10": (0, 2, 3)}
CASES = [(t, s) for t in SEEDS for s in SEEDS[t]]


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_styled_correct_answers_pass(task, seed):
    good, _ = _solutions(instance(task, seed), task)
    assert len(good) >= 12
    assert not (misjudged := rejected(task, seed, good)), misjudged


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_styled_wrong_answers_fail(task, seed):
    _, bad = _solutions(instance(task, seed), task)
    assert len(bad) >= 8
    assert not (misjudged := accepted(task, seed, bad)), misjudged
