"""Issue 24's cases 1 and 2 (task_10), restated at the seeds the independent players met them, with revision
4's contract; case 3 (task_02's moved copy) is in ``test_reward_hacks_moved_copies.py``.

Case 1, seed 60: the right query q-b054 with a confidently wrong cause (the SELECT alias ``month`` in the
GROUP BY), whose sentence repeated the error's words and passed revision 3. Case 2, seed 61: the right
query q-7f7f, its cause ending "(otherwise q-3fbe or q-917d on invoices)". Each fails as a careful reviewer
would have it, for the right reason (the checker's message says why), in the player's words and in the
closed form the player would now write; the right closed-form answer passes beside them.
"""

from __future__ import annotations

from pytest_agentic import Final
from pytest_agentic.run import answerlines

from .helpers import steps
from .test_answer_corpus import instance, judged

#: The player's CAUSE: line of case 1, word for word.
CASE_1 = ('q-b054 groups by the SELECT alias month (a computed expression), which SQLite cannot resolve in the '
          'GROUP BY, so binding the aggregated billed_cents column fails with "no such column: billed_cents".')


def _reply(seed: int, text: str) -> str | None:
    inst = instance("10", seed)
    return judged("10", seed, [*steps(inst), Final(text)])


def test_the_players_instances():
    one, two = instance("10", 60).expected, instance("10", 61).expected
    assert (one["query_id"], one["kind"], one["names"]) == ("q-b054", "missing_column", ["orders.billed_cents"])
    assert (two["query_id"], two["kind"], two["names"]) == ("q-7f7f", "missing_column", ["orders.total_cents"])
    assert {"q-3fbe", "q-917d"} <= set(two["all_ids"])


def test_right_closed_form_answers_pass_at_the_players_seeds():
    assert _reply(60, "QUERY: q-b054\nCAUSE: missing_column\nNAMES: orders.billed_cents") is None
    assert _reply(61, "q-3fbe and q-917d read invoices, where total_cents is.\n\n"
                      "QUERY: q-7f7f\nCAUSE: missing_column\nNAMES: orders.total_cents") is None


def test_case_1_a_wrong_cause_that_quotes_the_error_fails():
    # the player's sentence on the CAUSE: line: no kind of the set, so nothing to judge (the form was not kept)
    why = _reply(60, f"QUERY: q-b054\nCAUSE: {CASE_1}")
    assert why is not None and answerlines.is_format_failure(why) and "CAUSE:" in why, why
    # the same sentence with the lines the prompt asks for: the words around them are free and unjudged,
    # and the player's belief written in closed form fails on its value, not its form
    wrong = {
        "the alias as the missing name": "CAUSE: missing_column\nNAMES: orders.month",
        "the error copied": "CAUSE: missing_column\nNAMES: billed_cents",
        "where the column lives": "CAUSE: missing_column\nNAMES: invoices.billed_cents",
        "an alias is ambiguous": "CAUSE: ambiguous_column\nNAMES: orders.month, orders.billed_cents",
    }
    for name, lines in wrong.items():
        why = _reply(60, f"{CASE_1}\n\nQUERY: q-b054\n{lines}")
        assert why is not None and not answerlines.is_format_failure(why), (name, why)
        assert "NAMES:" in why or "CAUSE:" in why, (name, why)
    # the error's words alone name no table: the message says so
    why = _reply(60, "QUERY: q-b054\nCAUSE: missing_column\nNAMES: billed_cents")
    assert "the error's own words name neither table" in why, why


def test_case_2_a_note_on_the_cause_is_out_of_form_and_a_second_id_a_hedge():
    lines = "QUERY: q-7f7f\nCAUSE: missing_column\nNAMES: orders.total_cents"
    body = "Next suspects: q-3fbe, then q-917d (both read invoices).\n\n"
    note = " (otherwise q-3fbe or q-917d on invoices)"
    # revision 5: a note puts the line out of form, whatever it says
    for label in ("CAUSE: missing_column", "NAMES: orders.total_cents", "QUERY: q-7f7f"):
        why = _reply(61, body + lines.replace(label, label + note))
        assert why is not None and answerlines.is_format_failure(why), (label, why)
    why = _reply(61, body + lines.replace("CAUSE: missing_column", "CAUSE: missing_column (otherwise on invoices)"))
    assert why is not None and answerlines.is_format_failure(why), why
    # the other ids in the value itself are a hedge
    why = _reply(61, body + lines.replace("QUERY: q-7f7f", "QUERY: q-7f7f or q-3fbe"))
    assert why is not None and "hedge" in why and not answerlines.is_format_failure(why), why
    # the same suspects in the free body, off the judged lines, are allowed
    assert _reply(61, body + lines) is None
