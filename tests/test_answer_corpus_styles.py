"""Answers in the styles that slip past hand-written rules, judged by the task's checker.

Reasoning-model output (a ``<think>`` block that weighs every candidate before the
answer, or a reasoning block whose opening tag was in the chat template), LaTeX
(``\\boxed{}``, ``$...$``), HTML tags, Markdown tables whose other rows are ruled
out, quoted log lines and SQL holding other ids (evidence, not a claim), numbers
with separators and units, terse lowercase answers, and very long answers that
restate the task. The wrong ones list every candidate (shotgun), name the right
one only to reject it, give a wrong cause that still uses the right names, or
never leave their reasoning block.
"""

from __future__ import annotations

import json

import pytest

from .test_answer_corpus import _cause_10, answers, instance, judged

_FILLER = ("I started by listing the workspace and reading every file the task mentions, then re-read the "
           "relevant parts to make sure nothing was missed. ")


def _think(body: str) -> str:
    return f"<think>\n{body}\n</think>\n\n"


def styles_03(inst):
    e = inst.expected
    eid, key, d = e["event_id"], e["key"], e["decoys"]
    log = inst.files[next(iter(inst.files))].splitlines()
    at = next(i for i, ln in enumerate(log) if f"id={eid}" in ln)
    quoted = "\n".join(log[at:at + 8])
    every = ", ".join([eid, *d.values()])
    good = {
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
    }
    bad = {
        "rejects_the_right_one": f"It's not {eid}; the database is the cause.",
        "right_one_ruled_out": f"{eid} is not the root cause; it is a routine reload.",
        "shotgun": f"Candidates: {every}.",
        "shotgun_table": "| id |\n|---|\n" + "".join(f"| {i} |\n" for i in [eid, *d.values()]),
        "think_only_unterminated": f"<think>\nThe cause is probably {eid}, the {key} change. Let me check",
        "think_then_wrong": _think(f"{eid} looks like the cause.") + f"The root cause is {d['first_error']}.",
        "quotes_several_names_none": f"```\n{quoted}\n```",
        "html_wrong": f"<b>{d['benign_change']}</b>",
        "empty_after_think": _think(f"It is {eid}.") + "   ",
    }
    return good, bad


def _wrong_cause_10(e) -> str:
    name, *_ = e["cause_terms"]
    table = {"missing_column": "invoices", "ambiguous_column": "customers", "missing_table": e["cause_terms"][1][0]}
    return f"it reads `{name[0]}` while the {table[e['kind']]} table was locked by another job"


def styles_10(inst):
    e = inst.expected
    qid, cause = e["query_id"], _cause_10(e)
    last, valid = list(e["decoys"])
    log = inst.files[next(p for p in inst.files if p.startswith("logs/"))]
    lines = log.splitlines()
    at = next(i for i, ln in enumerate(lines) if f"] {qid} submitted" in ln)
    block = "\n".join(lines[max(1, at - 2):at + 4])
    every = ", ".join([qid, last, valid])
    good = {
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
    }
    bad = {
        "rejects_the_right_one": f"It's not {qid}; the database was the cause: {cause}.",
        "right_one_ruled_out": f"{qid} did not fail. The job failed because {cause}.",
        "wrong_cause_same_names": f"{qid} failed because {_wrong_cause_10(e)}.",
        "wrong_cause_timeout": f"{qid} failed: it timed out while reading `{e['cause_terms'][0][0]}`.",
        "shotgun": f"One of {every} failed: {cause}.",
        "shotgun_table": "| query |\n|---|\n" + "".join(f"| {q} |\n" for q in [qid, last, valid]) + f"\n{cause}.",
        "think_only_unterminated": f"<think>\nThe failing query is {qid}: {cause}. Let me double-check",
        "think_then_wrong": _think(f"{qid} looks like it.") + f"The failing query is {valid}: {cause}.",
        "quotes_block_names_none": f"```\n{block}\n```\n{cause}.",
    }
    return good, bad
