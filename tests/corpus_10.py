"""task_10's answer corpus (revision 4's closed-form lines), and what the other task_10 corpora share."""

from __future__ import annotations

from pytest_agentic import Final

from .helpers import restate, steps, think as _think


def _cause_10(e) -> str:
    """The cause in words, for the free prose of a reply (no verdict reads it)."""
    name = e["error"].rsplit(": ", 1)[1]
    if e["kind"] == "missing_column":
        return f"it reads `{name}` from `orders`, but that column belongs to `invoices`"
    if e["kind"] == "ambiguous_column":
        return f"`{name}` is ambiguous in the join: both customers and orders have that column"
    return f"it joins `{name}`, but there is no such table; the schema calls it `{e['names'][1]}`"


def lines_10(e, **changes) -> dict[str, str]:
    """task_10's three answer lines (revision 4), with ``changes``."""
    return {"QUERY": e["query_id"], "CAUSE": e["kind"], "NAMES": ", ".join(e["names"]), **changes}


def log_10(inst) -> tuple[list[str], int]:
    """The job log's lines, and the index of the line where the failing query is submitted."""
    log = inst.files[next(p for p in inst.files if p.startswith("logs/"))]
    lines_ = log.splitlines()
    qid = inst.expected["query_id"]
    return lines_, next(i for i, ln in enumerate(lines_) if f"] {qid} submitted" in ln)


def corpus_10(inst):
    e = inst.expected
    qid, cause = e["query_id"], _cause_10(e)
    last, valid = list(e["decoys"])
    ok = lines_10(e)
    kind, names = e["kind"], e["names"]
    other_kind = next(k for k in ("missing_column", "ambiguous_column", "missing_table") if k != kind)
    log, at = log_10(inst)
    good = restate(inst, {
        "plain": ("", ok),
        "rules_out_the_others": (f"{last} ran last but succeeded; {valid} uses the same name validly.", ok),
        "upper_case": ("", lines_10(e, QUERY=f"Q-{qid[2:].upper()}", CAUSE=kind.upper())),
        "bare_hex": ("", lines_10(e, QUERY=qid[2:])),
        "quoted_log": ("```\n" + "\n".join(log[at - 2:at + 3]) + "\n```", ok),
        "error_and_cause_in_prose": (f"SQLite says `{e['error']}`: {cause}.", ok),
        "kind_in_words": ("", lines_10(e, CAUSE=kind.replace("_", " ").capitalize())),
        "names_with_and": ("", lines_10(e, NAMES=" and ".join(names))),
        "names_in_code_spans": ("", lines_10(e, NAMES=", ".join(f"`{n}`" for n in names))),
        "after_think": (_think(f"{last}? It is the last line... no, it finished.") + "Checked the schema.", ok),
        "report": (f"## Failing query\n\n| id | status |\n|---|---|\n| {last} | ok |\n| {qid} | failed |", ok),
        "cause_first": ("", {"CAUSE": kind, "NAMES": ", ".join(names), "QUERY": qid}),
        "note_on_the_query": ("", lines_10(e, QUERY=f"{qid} (the 4th query)")),
        "offer_after": ("", ok),
    })
    good["offer_after"][-1] = Final(f"QUERY: {qid}\nCAUSE: {kind}\nNAMES: {', '.join(names)}\n\n"
                                    "I can write the corrected query if you like.")
    bad = {**inst.near_misses, **restate(inst, {
        "confident_last": ("", lines_10(e, QUERY=last)),
        "valid_use": ("", lines_10(e, QUERY=valid)),
        "two_ids": ("", lines_10(e, QUERY=f"{qid}, {valid}")),
        "wrong_cause_kind": ("", lines_10(e, CAUSE=other_kind)),
        "two_kinds": ("", lines_10(e, CAUSE=f"{kind} or {other_kind}")),
        "other_kind_in_a_note": ("", lines_10(e, CAUSE=f"{kind} (not {other_kind})")),
        "error_copied_on_the_names": ("", lines_10(e, NAMES=e["error"].rsplit(": ", 1)[1])),
        "extra_name": ("", lines_10(e, NAMES=", ".join([*names, "products.sku"]))),
        "schema_name_in_a_note": ("", lines_10(e, NAMES=f"{', '.join(names)} (see invoices, products)")),
        "other_query_in_a_note": ("", lines_10(e, CAUSE=f"{kind} (otherwise {last})")),
        "right_in_prose_wrong_line": (f"{qid} failed: {cause}.", lines_10(e, QUERY=last)),
        "format_no_lines": (f"The failing query is {qid}: {cause}.", None),
        "format_cause_in_a_sentence": ("", lines_10(e, CAUSE=cause)),
        "format_no_names_line": (f"It failed because {cause}.", {"QUERY": qid, "CAUSE": kind}),
        "format_no_id_on_the_line": ("", lines_10(e, QUERY="the monthly revenue query")),
    })}
    # The pair of a missing table has two roles (named, meant): reversed, it calls the schema's table missing
    # (an independent player's answer at seed 71). The other kinds' names are sets: any order.
    if kind == "missing_table":
        bad["missing_table_reversed"] = restate(inst, {"r": ("", lines_10(e, NAMES=", ".join(reversed(names))))})["r"]
    else:
        good["names_reversed_with_and"] = restate(inst, {"r": ("", lines_10(e, NAMES=" and ".join(reversed(names))))})["r"]
    bad["disagreeing_lines"] = [*steps(inst), Final(f"QUERY: {qid}\nCAUSE: {kind}\nNAMES: {', '.join(names)}"
                                                    f"\n\nQUERY: {last}")]
    return good, bad
