"""Independent players' task_10 answers (revision 4; restated for revision 5), replayed word for word at their seeds.

Players wrote the model's side by hand through the real HTTP path without reading any checker
(/work/play in the session of 2026-11-25: p4 and p7 at seeds 71 and 72). Each reply below was accepted
before the checker read a note written off its line and the order of a missing table's pair; each must
now fail for the reason a reviewer gives; since revision 5 the notes fail as ``answer_format`` (a judged line
holds its value alone, and no note is read). The replies whose hedge or mistake lives in free prose are
kept as the contract's other side: prose is never judged, so they pass.
"""

from __future__ import annotations

import pytest

from pytest_agentic import Final

from .helpers import steps
from .test_answer_corpus import instance, judged

#: (seed, reply, words the checker's reason must hold). Seed 71: q-e90f, missing_table, order_line ->
#: order_lines; seed 72: q-c0b0, ambiguous_column, customers.created_on and orders.created_on.
REJECTED = {
    "note_on_its_own_line_between_the_lines": (72, (
        "The error was `ambiguous column name: created_on`. The most likely culprit is `q-c0b0`, which joins "
        "customers and orders and filters on an unqualified `created_on`. Both tables have that column.\n\n"
        "QUERY: q-c0b0\n(second candidate, if the log's order is off: q-283a)\nCAUSE: ambiguous_column\n"
        "NAMES: customers.created_on, orders.created_on"), "answer_format"),
    "notes_on_their_own_lines_under_cause_and_names": (71, (
        "The job failed on `no such table: order_line`. q-e90f joins `order_line`, but the schema only has "
        "`order_lines`.\n\nQUERY: q-e90f\nCAUSE: missing_table\n(or missing_column, if order_line is read as "
        "a column)\nNAMES: order_line, order_lines\n(or orders.order_line)"), "answer_format"),
    "footnote_on_the_query": (71, (
        "The job's error is `no such table: order_line`. q-e90f joins `order_line`, which is not in the schema. "
        "The schema's table is `order_lines`.\n\nQUERY: q-e90f[^1]\nCAUSE: missing_table\n"
        "NAMES: order_line, order_lines\n\n[^1]: q-046a is an equally likely candidate, since it reads the same "
        "line-item data."), "answer_format"),
    "bracketed_alternative_after_names": (71, (
        "The run ended with `no such table: order_line`; q-e90f is the only query naming `order_line` \u2014 the "
        "schema's table is `order_lines`.\n\nQUERY: q-e90f\nCAUSE: missing_table\nNAMES: order_line, order_lines\n"
        "[alt. if the table exists in prod: missing_column on order_lines.qty]"), "answer_format"),
    "missing_table_pair_reversed": (71, (
        "q-e90f failed: the job could not find the table it joined. The schema defines `order_line`-style line "
        "data under a different name, so the names are swapped.\n\nQUERY: q-e90f\nCAUSE: missing_table\n"
        "NAMES: order_lines, order_line"), "first"),
}

#: Free prose, by the contract: a sentence is never judged, whatever it says.
PASSED = {
    "fallback_in_a_sentence_after_the_lines": (72, (
        "q-c0b0 filters on an unqualified created_on.\n\nQUERY: q-c0b0\nCAUSE: ambiguous_column\n"
        "NAMES: customers.created_on, orders.created_on\n\nIf that is rejected, my next suspect is q-283a.")),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_players_hedges_and_swaps_fail(name):
    seed, reply, words = REJECTED[name]
    why = judged("10", seed, [*steps(instance("10", seed)), Final(reply)])
    assert why is not None and words in why, why


@pytest.mark.parametrize("name", sorted(PASSED))
def test_prose_stays_free(name):
    seed, reply = PASSED[name]
    assert judged("10", seed, [*steps(instance("10", seed)), Final(reply)]) is None
