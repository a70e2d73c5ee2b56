"""More answers per answer task, in the styles real agents write them, judged by the task's checker.

The first corpus (test_answer_corpus.py) holds short answers in many styles; this one holds the
long ones, each closed by its answer lines (revision 3): Markdown reports with headings and tables,
numbered investigation steps that mention other values while ruling them out, quoted log lines and
configs with their timestamps and line numbers, JSON, "TL;DR" and "Final answer:" lines, emoji
check marks, trailing offers and questions. None of that prose is judged. The wrong ones put on
their answer line a hedge ("probably A, but could be B"), two candidates, a value the prose itself
ruled out, or a line that contradicts another; ``format_*`` ones give no readable line.
"""

from __future__ import annotations

import json

import pytest

from pytest_agentic import Final

from .helpers import close, out_of_form, restate
from .corpus_10 import _cause_10, lines_10, log_10
from .test_answer_corpus import accepted, instance, rejected


def agents_03(inst):
    e = inst.expected
    eid, key, d = e["event_id"], e["key"], e["decoys"]
    log = inst.files[next(iter(inst.files))]
    line = next(ln for ln in log.splitlines() if f"id={eid}" in ln)
    stamp, date = line.split()[0], line[:10]
    good = close(inst, {
        "report": (f"## Investigation\n\n1. Listed the workspace and opened the log ({len(log.splitlines())} lines).\n"
                   f"2. The first errors appear a few seconds after {stamp}.\n3. Walked back from them to the last "
                   f"change that could explain them.\n\n## Root cause\n\n**`{eid}`**: `{key}` was reloaded at "
                   f"{stamp}; the warnings and then the errors follow from it.\n\n## Recommendation\n\nRevert "
                   f"`{key}` to its previous value. Want me to draft the rollback?"),
        "json": json.dumps({"event_id": eid, "reason": f"{key} was changed at runtime and the failures follow it"}),
        "tldr": f"**TL;DR:** `id={eid}`: the {key} reload on {date} caused the incident.\n\nDetails: see below.",
        "final_answer_line": f"I traced the errors back to a config reload.\n\nFinal answer: {eid}: the {key} change.",
        "emoji": f"\u2705 Root cause found: `{eid}` ({key} changed) \U0001f50d",
        "quotes_the_prompt": (f"> Find the root-cause entry and reply with its event id\n\n"
                              f"The root-cause entry is {eid}: {key} was reloaded and everything after it degrades."),
        "log_line_with_timestamp": f"Root cause:\n\n```log\n{line}\n```\n\nThe reload of {key} started the failures.",
        "rules_out_in_prose": (f"The first failing request is only a symptom, the ledger timeouts recur all day "
                               f"and are retried, and the feature-flag reload a second later is harmless. The cause "
                               f"is event {eid}, the {key} change."),
        "event_id_field": f"Event ID: {eid.upper()} (timestamp {stamp}, {date})",
        "italic_and_link": f"_Root cause_: [{eid}](logs/) \u2014 {key} was changed.",
        "trailing_question": f"{eid} is the root cause ({key} reload). Should I also check the other services?",
        "heading_id": f"### `{eid}`\nChanged `{key}`; from that moment the errors start.",
    }, {"ANSWER": eid})
    bad = restate(inst, {
        "probably_but_could_be": ("", {"ANSWER": f"probably {eid}, but it could also be {d['first_error']}"}),
        "two_candidates_note": ("", {"ANSWER": f"{eid} (or {d['benign_change']}, medium likelihood)"}),
        "json_wrong": (json.dumps({"event_id": eid}), {"ANSWER": d["benign_change"]}),
        "report_wrong": (f"## Root cause\n\n1. Opened the log.\n2. Found the first ERROR.", {"ANSWER": d["first_error"]}),
        "self_correction_to_wrong": (f"My first guess was {eid}; on reflection it is the ledger timeout.",
                                     {"ANSWER": d["recurring_error"]}),
        "both": ("", {"ANSWER": f"{eid} and {d['first_error']}"}),
        "format_truncated_id": (f"Root cause: {eid} ({key}).", {"ANSWER": eid[:6]}),
        "format_refuses": ("", {"ANSWER": "cannot determine a single root cause"}),
    })
    return good, bad


def agents_04(inst):
    e = inst.expected
    value, pkg, mod = e["value"], e["package"], e["module"]
    path = f"{pkg}/shipping/{mod}.py"
    decoy_value = e["decoy_values"][0]
    call = e["call"]
    good = close(inst, {
        "report": (f"## Trace\n\n1. `checkout` builds the order for region `{call['region']}`.\n2. `quote` looks the "
                   f"mode up in its dispatch table.\n3. The table maps it to the function below, which reads the "
                   f"patched tariff table.\n\n## Answer\n\n- **Value:** `{value}` cents\n- **Function:** "
                   f"`{path}:fee`\n\nWant me to add a test pinning this value?"),
        "dollars_and_cents": f"`{path}:fee` returns {value} cents (${value / 100:.2f}).",
        "dollars_first": f"${value / 100:.2f}, i.e. **{value:,} cents**, computed by `{path}:fee`.",
        "json": json.dumps({"value_cents": value, "function": f"{path}:fee"}),
        "final_answer_line": f"Traced through the dispatch table.\n\nFinal answer: {value} \u2014 {path}:fee",
        "tldr": f"TL;DR: **{value}** \u2190 `{path}:fee`",
        "line_reference": f"{value} cents, computed in `{path}:fee` (the return on {path}:10).",
        "restates_the_call": (f"`{pkg}.api.checkout({call['items']!r}, \"{call['region']}\", mode=\"{call['mode']}\")`"
                              f" returns **{value}**, computed by `{path}:fee`."),
        "emoji": f"\u2705 {value} cents \u2014 `{path}:fee`",
        "rules_out_by_description": (f"It returns {value}. The module named after the mode is never imported, so "
                                     f"its fee does not run; the one that does is `{path}:fee`."),
        "cents_suffix": f"Returns {value}\u00a2 via {path}:fee.",
        "table": f"| | |\n|---|---|\n| **Return value** | {value:,} (cents) |\n| **Computed by** | `{path}:fee` |",
        "operands_after_returns": f"`fee` returns {value // 2} + {value - value // 2} = {value}; that is `{path}:fee`.",
        "conditional_side_value": (f"Answer: {value} cents from {path}:fee. Without the tariff update it would "
                                   f"return {value + 300}."),
        "or_with_units": f"{path}:fee returns {value} cents, or ${value / 100:.2f}.",
        "mode_then_colon": f'With mode="{call["mode"]}": fee = {value} cents, computed by `{path}:fee`.',
        "mode_sentence": f"The mode is {call['mode']}. Fee: {value} cents from {path}:fee.",
        "negation_before_colon": f"It isn't the function named after the mode: {path}:fee returns {value}.",
    }, {"VALUE": value, "FUNCTION": f"{path}:fee"})
    fn = f"{path}:fee"
    bad = restate(inst, {
        "hedged_other_value": ("", {"VALUE": f"{value} (or possibly {value + 100} without the update)", "FUNCTION": fn}),
        "probably_decoy": ("", {"VALUE": f"probably {value}, but it could be {decoy_value}", "FUNCTION": fn}),
        "json_wrong": (json.dumps({"value_cents": value}), {"VALUE": decoy_value, "FUNCTION": fn}),
        "dispatcher": ("", {"VALUE": value, "FUNCTION": f"{pkg}/shipping/__init__.py:quote"}),
        "typo_value": ("", {"VALUE": int(str(value)[::-1]), "FUNCTION": fn}),
        "might_be_other": (f"{fn} returns {value}.", {"VALUE": f"{value}, though it might be {value + 100}",
                                                         "FUNCTION": fn}),
        "format_dollars_only": (f"It returns {value} cents.", {"VALUE": f"${value / 100:.2f}", "FUNCTION": fn}),
        "format_no_value_line": (f"{fn} returns {value}.", {"FUNCTION": fn}),
    })
    bad["contradicting_lines"] = [*bad["typo_value"][:-1], Final(f"VALUE: {value}\nFUNCTION: {fn}\n\nVALUE: {value + 250}")]
    return good, bad


def agents_08(inst):
    e = inst.expected
    port, (stale, default), new_path = e["port"], e["wrong_ports"], e["new_path"]
    service = new_path.rsplit("/", 1)[1][:-5]
    good = close(inst, {
        "report": (f"## Findings\n\n1. `config/{service}.yaml` failed: the error says the config moved to "
                   f"`{new_path}`.\n2. Read `{new_path}`:\n\n```yaml\nservice: {service}\nlisten:\n  host: 0.0.0.0\n"
                   f"  port: {port}\n```\n\n## Answer\n\n**{port}**"),
        "json": json.dumps({"service": service, "port": port, "source": new_path}),
        "final_answer_line": f"The old file moved in the v2 migration.\n\nFinal answer: {port}",
        "host_port": f"It binds `0.0.0.0:{port}` (see {new_path}:4).",
        "tldr": f"TL;DR: port **{port}** \u2705",
        "comparison_table": (f"| source | port | status |\n|---|---|---|\n| `{new_path}` | {port} | \u2705 live |\n"
                             f"| `config/{service}.yaml.bak` | {stale} | \u274c backup |\n"
                             f"| `config/defaults.yaml` | {default} | \u274c overridden |"),
        "rules_out_first": (f"Not {stale} (pre-migration backup) and not {default} (defaults). "
                            f"The {service} service listens on TCP port {port}."),
        "trailing_question": f"Port {port}, from {new_path}. Should I update references to the old path?",
        "with_workers": f"Port {port} ({workers(inst)} workers, host 0.0.0.0).",
        "quotes_the_prompt": f"> Which TCP port does the {service} service listen on?\n\n{port}/tcp.",
        "tcp_suffix": f"**{port}/tcp**, read from `{new_path}` after the old path errored.",
        "bold_heading": f"# {port}\n\nSource: `{new_path}` (the error named it).",
        "might_see_backup": f"{port}. You might see {stale} in the .bak file, but that is stale.",
        "may_list_default": f"{port}. The defaults file may list {default}, but the service's own file overrides it.",
        "pre_v2_value": f"Port {port} (TCP). {stale} was the pre-v2 value.",
        "not_a_or_b": f"It's {port}, not {stale} or {default}.",
        "both_red_herrings": f"Both {stale} and {default} are red herrings; the answer is {port}.",
        "and_not_the_backup": f"The port is {port} and not the one in the backup.",
        "rather_than_noun": f"It listens on {port} rather than the backup's port.",
        "overrides_noun": f"{port} overrides the default.",
        "which_is_not_old": f"{port}, which is not the old port.",
        "status_code": f"Port {port}. The health endpoint returns 200 on /healthz.",
    }, {"ANSWER": port})
    bad = restate(inst, {
        "nearby_hedge": ("", {"ANSWER": f"{port}, or maybe {port + 1}"}),
        "probably_backup": ("", {"ANSWER": f"{port} (could be {stale} if the backup is still deployed)"}),
        "json_wrong": (json.dumps({"service": service, "port": port}), {"ANSWER": default}),
        "report_wrong": (f"## Answer\n\n`config/{service}.yaml.bak` says **{stale}**.", {"ANSWER": stale}),
        "both": ("", {"ANSWER": f"{port} and {stale}"}),
        "typo": ("", {"ANSWER": int(str(port)[::-1])}),
        "format_gave_up": (f"The file {new_path} could not be confirmed.", {"ANSWER": "unknown"}),
        "might_be_backup": ("", {"ANSWER": f"{port} \u2014 might be {stale} if the backup is live"}),
    })
    bad["self_contradiction"] = [*bad["typo"][:-1], Final(f"ANSWER: {port}\n\nFinal answer:\nANSWER: {stale}")]
    return good, bad


def workers(inst) -> int:
    text = inst.files[inst.expected["new_path"]]
    return int(text.rsplit("workers: ", 1)[1])


def agents_09(inst):
    e = inst.expected
    count = e["count"]
    rows = inst.files["data/prices.csv"].splitlines()[1:]
    first, last = rows[0].split(",")[0], rows[-1].split(",")[0]
    mean = sum(float(r.split(",")[2]) for r in rows) / count
    good = close(inst, {
        "report": (f"## Result\n\n\u274c **Cannot compute** a 10-day SMA as of {last}.\n\n## Why\n\n"
                   f"- `data/prices.csv` has **{count}** rows ({first} \u2192 {last}).\n- A 10-day window needs 10.\n\n"
                   f"## Options\n\n1. Provide at least {10 - count} earlier closes.\n2. Use a shorter window.\n\n"
                   "Want me to compute a shorter-window average instead?"),
        "json": json.dumps({"sma_10": None, "reason": f"only {count} closes in the file; 10 are needed"}),
        "tldr": f"TL;DR: not possible \u2014 {count} data points < 10.",
        "side_figure_bullets": (f"- 10-day SMA: **not computable** (only {count} closes)\n"
                                f"- For reference, the {count}-day average is {mean:.2f}"),
        "final_answer_line": f"Final answer: the 10-day SMA cannot be computed; the file has {count} closes.",
        "quotes_the_prompt": (f"> Compute the 10-day simple moving average\n\nI can't: there are only {count} "
                              "daily closes, so there is no 10-day window yet."),
        "words_and_dates": (f"The data runs from {first} to {last}, which is {count} trading days \u2014 "
                            "fewer than the ten the window needs, so no 10-day SMA exists."),
        "offer_with_code": (f"```python\nlen(closes)  # {count}\n```\nA 10-day SMA needs 10 values, so it is "
                            "undefined here. Send more history and I will compute it."),
        "emoji": f"\u26a0\ufe0f Insufficient data: {count}/10 closes.",
        "labelled_in_table": (f"| metric | value |\n|---|---|\n| closes available | {count} |\n"
                              f"| 10-day SMA | not computable |\n| {count}-day average (not the SMA asked for) | "
                              f"{mean:.2f} |"),
        "missing_count": f"Cannot do it: {10 - count} closes are missing for a 10-day window.",
        "short_window_named": f"Not enough data for a 10-day SMA ({count} closes); a {count}-day mean would be {mean:.2f}.",
        "window_notation": f"SMA({count}) = {mean:.2f}; SMA(10) = n/a (only {count} closes).",
        "needs_more": f"I need {10 - count} more closes before I can compute a 10-day SMA for {last}.",
    }, {"ANSWER": f"not computable: {count} of 10 closes"})
    bad = restate(inst, {
        "json_value": (json.dumps({"sma_10": None}), {"ANSWER": f"{mean:.2f}"}),
        "tldr_value": ("", {"ANSWER": f"{mean:.2f} (only {count} closes, so approximate)"}),
        "report_value": (f"## Result\n\nNot a real 10-day SMA.", {"ANSWER": f"**{mean:.2f}**"}),
        "approximately": ("", {"ANSWER": f"approximately {mean:.2f}"}),
        "hedged_value": ("", {"ANSWER": f"insufficient data (probably around {mean:.2f})"}),
        "emoji_value": ("", {"ANSWER": f"\u2705 {mean:.2f}"}),
        "format_no_reason_no_line": ("I cannot compute it.", None),
        "format_blank_line": ("", {"ANSWER": "\u2014"}),
    })
    return good, bad


def _other_words_10(e) -> str:
    name = e["error"].rsplit(": ", 1)[1]
    if e["kind"] == "missing_column":
        return f"it sums {name}, but that column only exists in the invoices table"
    if e["kind"] == "ambiguous_column":
        return f"{name} exists in two of the joined tables, so SQLite cannot tell which one is meant"
    return f"it joins {name}, which schema.sql does not define (it has {e['names'][1]})"


def agents_10(inst):
    e = inst.expected
    qid, cause = e["query_id"], _cause_10(e)
    last, valid = list(e["decoys"])
    lines, at = log_10(inst)
    stamp = lines[at][1:13]
    sql = lines[at + 1].strip()
    good = close(inst, {
        "report": (f"## Failing query\n\n**`{qid}`** (submitted at {stamp})\n\n```sql\n{sql}\n```\n\n## Cause\n\n"
                   f"{cause}.\n\n## Fix\n\nQualify or rename the offending name. Want me to write the corrected "
                   "query?"),
        "json": json.dumps({"query_id": qid, "cause": cause, "error": e["error"]}),
        "final_answer_line": f"Checked every query against schema.sql.\n\nFinal answer: {qid} \u2014 {cause}.",
        "tldr": f"TL;DR: `{qid}` \u2705 \u2014 {cause}.",
        "timestamps": f"At {stamp} the job submitted {qid}; {cause}. The job ended at {lines[-1][1:13]} with the error.",
        "quotes_the_prompt": f"> Find the query that failed and explain why it failed.\n\n{qid}: {cause}.",
        "uppercase_id": f"**{qid.upper()}** failed \u2014 {cause}.",
        "steps_without_ids": (f"1. Read the log: the error names no query.\n2. Read schema.sql.\n3. Re-ran the "
                              f"candidates with sql_query.\n\nResult: {qid} \u2014 {cause}."),
        "schema_line_ref": f"{qid}. Cause: {cause} (schema.sql:1-30).",
        "emoji": f"\u274c {qid} \u2192 {cause}",
        "error_first": f"`{e['error']}` comes from {qid}: {cause}.",
        "trailing_question": f"The failing query is {qid}; {cause}. Should I patch the job's SQL?",
        "schema_in_other_words": f"{qid} fails: {_other_words_10(e)}.",
    }, lines_10(e))
    bad = restate(inst, {
        "probably_but_could_be": ("", lines_10(e, QUERY=f"probably {qid}, but it could also be {valid}")),
        "json_wrong": (json.dumps({"query_id": qid}), lines_10(e, QUERY=last)),
        "report_wrong": (f"## Failing query\n\n**`{qid}`**", lines_10(e, QUERY=valid)),
        "both": ("", lines_10(e, QUERY=f"{qid} and {valid}")),
        "format_cause_a_sentence": (f"{cause}.", lines_10(e, CAUSE="the database was locked by another job")),
        "names_where_it_is_valid": ("", lines_10(e, NAMES=f"invoices.{e['error'].rsplit(' ', 1)[1]}"
                                                 if e["kind"] == "missing_column" else e["names"][1])),
        "format_no_cause": ("", {"QUERY": qid}),
        "format_no_id": ("", lines_10(e, QUERY="the one in the error")),
    })
    bad["self_correction_to_wrong"] = [*bad["both"][:-1], Final(
        f"QUERY: {qid}\nCAUSE: {e['kind']}\nNAMES: {', '.join(e['names'])}\n\nActually:\nQUERY: {last}")]
    return good, bad


CORPORA = {"03": agents_03, "04": agents_04, "08": agents_08, "09": agents_09, "10": agents_10}

#: Revision 5 (issue 33): a judged line holds its value alone. The correct answers whose lines carried a
#: note (or words beyond the value's form) now fail as ``answer_format`` whatever it says, and so do the
#: wrong ones once judged by what their note said (:func:`~tests.helpers.out_of_form`).
#: Per task: (noted, renamed).
REVISION_5 = {
    '03': ((), ('two_candidates_note',)),
    '04': ((), ('hedged_other_value',)),
    '08': ((), ('might_be_backup', 'probably_backup')),
    '09': ((), ('approximately', 'hedged_value', 'tldr_value')),
}
CORPORA = {t: (lambda inst, c=c, t=t: out_of_form(*c(inst), *REVISION_5.get(t, ((), ()))))
           for t, c in CORPORA.items()}

#: Seeds that cover each task's variants (task_10: the three kinds of failure).
SEEDS = {"03": (0, 1, 3), "04": (0, 1, 3), "08": (0, 1, 3), "09": (0, 1, 3), "10": (0, 2, 3)}
CASES = [(t, s) for t in CORPORA for s in SEEDS[t]]


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_agent_styled_correct_answers_pass(task, seed):
    good, _ = CORPORA[task](instance(task, seed))
    assert len(good) >= 12
    assert not (misjudged := rejected(task, seed, good)), misjudged


@pytest.mark.parametrize(("task", "seed"), CASES, ids=[f"task_{t}-seed{s}" for t, s in CASES])
def test_agent_styled_wrong_answers_fail(task, seed):
    _, bad = CORPORA[task](instance(task, seed))
    assert len(bad) >= 8
    assert not (misjudged := accepted(task, seed, bad)), misjudged


