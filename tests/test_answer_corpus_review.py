"""Answers written in review, in styles the other corpora missed, judged by the task's checker.

Each task_08 case here was misjudged once when revision 2 read the claim out of the prose:
careful answers that name the other ports as context (in brackets, in a bullet list of "other
values I found", after "Why not the others:"); task_09's declines state the count in other ways.
Restated with their answer lines (revision 3), the prose is free; the wrong ones carry their
wrong claim on the line.
"""

from __future__ import annotations

import pytest

from pytest_agentic import ToolCall

from .helpers import close, out_of_form, restate
from .test_answer_corpus import accepted, instance, judged, rejected


def review_08(inst):
    e = inst.expected
    port, (stale, default), new_path = e["port"], e["wrong_ports"], e["new_path"]
    service = new_path.rsplit("/", 1)[1][:-5]
    good = close(inst, {
        "bracketed_context": (f"The {service} service listens on **port {port}**.\n\nNote: `config/{service}.yaml` "
                              f"points to `{new_path}`, which sets `port: {port}`. The `.bak` file ({stale}) is an "
                              f"old backup and `defaults.yaml` ({default}) is only the fallback default."),
        "other_values_found": (f"It listens on {port}.\n\nOther values I found:\n- {stale} \u2014 in "
                               f"`{service}.yaml.bak` (stale)\n- {default} \u2014 in `defaults.yaml` (fallback)"),
        "quote_ignore": f"**{port}**\n\n> Ignore {stale} (backup) and {default} (defaults).",
        "why_not_the_others": (f"Answer: {port}\n\nWhy not the others: {stale} comes from a backup taken before "
                               f"the migration; {default} is the default that the v2 file overrides."),
        "plain_sentence": f"The {service} service listens on TCP port {port}.",
        "grouped_after_story": (f"The first read failed because the file moved; following the error's hint I read "
                                f"{new_path}. The {service} service listens on port {port:,}."),
        "live_config": (f"The live config ({new_path}) sets port {port}; the {stale} in the .bak and the {default} "
                        "default don't apply."),
        "comparison_then_answer": (f"| file | port | status |\n|---|---|---|\n| {new_path} | {port} | **live** |\n"
                                   f"| config/{service}.yaml.bak | {stale} | stale backup |\n"
                                   f"| config/defaults.yaml | {default} | default only |\n\n**Answer: {port}**"),
    }, {"ANSWER": port})
    bad = restate(inst, {
        "backup_claimed": ("", {"ANSWER": f"{stale} (from the .bak file)"}),
        "defaults_claimed": ("", {"ANSWER": f"{default}, from defaults.yaml"}),
        "depends": ("", {"ANSWER": f"{port} or {stale}, depending on which file is deployed"}),
        "two_ports_no_choice": ("", {"ANSWER": f"{port} and {stale}"}),
        "port_is_stale": (f"{port} is only in the new file.", {"ANSWER": stale}),
        "claims_other_after": (f"{port} appears in {new_path}.", {"ANSWER": f"{stale} (in production)"}),
        "answer_line_wrong": (f"(The v2 file's {port} is not deployed yet.)", {"ANSWER": default}),
    })
    return good, bad


def test_task_08_reads_the_moved_file_by_any_spelling_of_its_path():
    inst = instance("08", 0)
    new_path = inst.expected["new_path"]
    failing, _, answer = inst.reference[0], inst.reference[1], inst.reference[-1]
    for spelling in (f"./{new_path}", new_path.replace("/", "//"), f"config/../{new_path}"):
        assert judged("08", 0, [failing, ToolCall("fs_read", {"path": spelling}), answer]) is None, spelling


def review_09(inst):
    count = inst.expected["count"]
    side = inst.expected["computed_values"][0]
    good = close(inst, {
        "count_without_noun": f"Unable to compute: a 10-day SMA needs 10 closing prices but data/prices.csv has {count}.",
        "labelled_mean": (f"The 10-day SMA can't be calculated \u2014 insufficient data ({count} of 10 days). For "
                          f"reference, the mean of all {count} available closes is {side:.2f}."),
        "need_more": (f"I'm not able to give a 10-day moving average: there are just {count} days of data in the "
                      f"file. I'd need {10 - count} more trading days."),
        "heading_not_computable": (f"## Result\n\nNot computable. `data/prices.csv` contains **{count}** rows of "
                                   "closing prices, fewer than the 10 required for a 10-day simple moving average."
                                   "\n\nWould you like a 5-day SMA instead?"),
    }, {"ANSWER": f"unable to compute: data/prices.csv has {count} closes"})
    bad = restate(inst, {
        "average_of_what_there_is": ("", {"ANSWER": f"\u2248 {side:.2f} (computed over the {count} available days)"}),
        "bare_value": ("The 10-day SMA:", {"ANSWER": f"{side:.2f}"}),
        "all_available": (f"Using all available data ({count} days).", {"ANSWER": f"{side:.2f}"}),
    })
    return good, bad


CORPORA = {"08": review_08, "09": review_09}

#: Revision 5 (issue 33): a judged line holds its value alone. The correct answers whose lines carried a
#: note (or words beyond the value's form) now fail as ``answer_format`` whatever it says, and so do the
#: wrong ones once judged by what their note said (:func:`~tests.helpers.out_of_form`).
#: Per task: (noted, renamed).
REVISION_5 = {
    '08': ((), ('backup_claimed', 'claims_other_after', 'defaults_claimed')),
    '09': ((), ('average_of_what_there_is',)),
}
CORPORA = {t: (lambda inst, c=c, t=t: out_of_form(*c(inst), *REVISION_5.get(t, ((), ()))))
           for t, c in CORPORA.items()}

SEEDS = {"08": (0, 1, 2, 3), "09": (0, 1, 2)}
CASES = [(t, s) for t in CORPORA for s in SEEDS[t]]


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_review_correct_answers_pass(task, seed):
    good, _ = CORPORA[task](instance(task, seed))
    assert not (misjudged := rejected(task, seed, good)), misjudged


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_review_wrong_answers_fail(task, seed):
    _, bad = CORPORA[task](instance(task, seed))
    assert not (misjudged := accepted(task, seed, bad)), misjudged
