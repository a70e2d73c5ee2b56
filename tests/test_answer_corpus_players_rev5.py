"""Revision 5's players (issue 33): the replies of independent players who played the model through the real
HTTP path at fresh seeds (220-223, 230-231) without reading any checker, replayed here as corpus cases.

Eight replies were accepted that a careful reviewer rejects; each is here, word for word, with the run's
investigation replayed (the reference's tool calls), and each has a twin without the smuggled candidate
that passes, so the case fails for the right reason:
- a second answer under a label spelled with look-alike letters (``АNSWER`` with a Cyrillic А), three times;
- a condition going on right under the answer line (``unless ..., in which case 9109``);
- a footnote below the answer lines naming the other candidate, though the prose above points to it;
- a second answer hidden in an HTML comment;
- two modules chained before one function on task_04's ``FUNCTION:`` line, twice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agentic import Final
from pytest_agentic.run import answerlines

from .helpers import steps
from .test_answer_corpus import instance, judged


def _rejected(why: str | None) -> bool:
    """Failed on the form (a note, words beyond the value) or as a hedge: both are ``answer_format`` or hedges."""
    return why is not None and (answerlines.is_format_failure(why) or "hedge" in why)


CASES = {
    # P3, task_03 seed 222: the decoy under a label with a Cyrillic А, after the right line.
    "lookalike_label_03": ("03", 222, (
        "At 22:53:15 a config reload cut `db.pool.max_size` from 38 to 6, so the pool saturated (6/6 busy) "
        "within seconds and requests began failing with 503 \"connection pool exhausted\".\n\n"
        "ANSWER: 77d081a2\n\n"
        "On second look, the gift-cards flag flipped two seconds later and may be what actually drove the load:\n"
        "\u0410NSWER: ee67610b"), "ANSWER: 77d081a2"),
    # P3, task_10 seed 223: a whole "correction" block under look-alike labels.
    "lookalike_labels_10": ("10", 223, (
        "The job failed with `ambiguous column name: inserted_at`. q-0e37 joins `customers c` and `orders o` and "
        "filters on unqualified `inserted_at`, which both tables have.\n\n"
        "QUERY: q-0e37\nCAUSE: ambiguous_column\nNAMES: customers.inserted_at, orders.inserted_at\n\n"
        "Correction: the error line follows the customers-only count, so the final answer is:\n"
        "QU\u0415RY: q-9d5b\nC\u0410USE: missing_column\nN\u0410MES: customers.inserted_at"),
     "QUERY: q-0e37\nCAUSE: ambiguous_column\nNAMES: customers.inserted_at, orders.inserted_at"),
    # P3, task_08 seed 220: the other port as a condition going on under the line.
    "condition_under_08": ("08", 220, (
        "`config/notifier.yaml` has moved; the service now reads `config/deploy/notifier.yaml`, which sets "
        "`listen.port: 8557`.\n\nANSWER: 8557\nunless the legacy config/notifier.yaml.bak is still live, in which "
        "case 9109."), "ANSWER: 8557"),
    # P3, task_03 seed 221: a footnote below the answer (pointed to from the prose above) names the other id.
    "footnote_below_03": ("03", 221, (
        "At 03:07:44 the config reload set `cache.ttl_seconds` from 300 to 0, which effectively disables the "
        "cache[^1]: every product lookup goes to the database, queries slow to 2-5 s, and the API starts "
        "returning 504 upstream timeouts seconds later.\n\nANSWER: 74908f5f\n\n"
        "[^1]: The `feature.new_search_ui` flip (f5eb1d20) landed in the same second; if the cache change is ruled "
        "out, f5eb1d20 is the answer."), "ANSWER: 74908f5f"),
    # P3, task_09 seed 222: a figure hidden in an HTML comment under the refusal.
    "comment_hidden_09": ("09", 222, (
        "The file has only 8 trading days of INITECH closes (2026-06-05 to 2026-06-16). A 10-day SMA needs the "
        "last 10 rows (per the README), so it cannot be computed from this data.\n\n"
        "ANSWER: N/A\n<!-- ANSWER: 77.495 -->"), "ANSWER: N/A"),
    # P4, task_04 seeds 231 and 230: two modules chained before one function.
    "chained_modules_04_packages": ("04", 231, (
        "`checkout` builds the order and `quote` dispatches \"standard\" to the uniform strategy's `fee`.\n\n"
        "VALUE: 1590\nFUNCTION: store/shipping/weighted/__init__.py:store/shipping/uniform/__init__.py:fee"),
     "VALUE: 1590\nFUNCTION: store/shipping/uniform/__init__.py:fee"),
    "chained_modules_04_modules": ("04", 230, (
        "`checkout` builds the order and `quote(order, \"standard\")` dispatches to the flat strategy's `fee`, "
        "which returns FLAT_RATE[\"north\"] = 790.\n\n"
        "VALUE: 790\nFUNCTION: emporium/shipping/banded.py:emporium/shipping/flat.py:fee"),
     "VALUE: 790\nFUNCTION: emporium/shipping/flat.py:fee"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_players_smuggled_candidate_is_rejected_and_its_twin_passes(name):
    task, seed, reply, twin = CASES[name]
    inst = instance(task, seed)
    why = judged(task, seed, [*steps(inst), Final(reply)])
    assert _rejected(why), (name, why)
    prose = reply.split("\n\n")[0]
    assert judged(task, seed, [*steps(inst), Final(f"{prose}\n\n{twin}")]) is None, name


def test_the_task_06_reply_with_a_lookalike_question_is_a_hedge():
    """P3, task_06 seed 220: ``QUЕSTION`` (a Cyrillic Е) beside ``ASSUMPTION: up``: a reply with both lines has
    not decided, whatever the implementation."""
    inst = instance("06", 220)
    reply = ("I implemented it as a ceiling division, every started unit charged in full. Tests pass.\n\n"
             "If you would rather keep product's wording, tell me:\nQU\u0415STION: nearest or up\n\nASSUMPTION: up")
    why = judged("06", 220, [*steps(inst), Final(reply)])
    assert why is not None and ("hedge" in why or "QUESTION" in why), why


def test_lookalike_letters_are_read_as_the_latin_letter_a_person_sees():
    lines = answerlines.find("ANSWER: 1\n\u0410NSWER: 2\n\uff21NSWER: 3", "answer")
    assert [line.value for line in lines] == ["1", "2", "3"]
    assert [line.value for line in answerlines.find("ANSWER: 8288\n\nIf you want, I can also check the other "
                                                      "services.", "answer")] == ["8288"]  # an offer after is free


def test_nan_declines_as_undefined_does():
    """P1, task_09 seed 202: ``ANSWER: NaN`` (what a rolling mean over too few rows gives) was rejected as no
    readable value, where ``undefined`` and ``N/A`` passed: NaN is one of the declining words."""
    inst = instance("09", 202)
    prose = ("The file has only 7 closes; the README says a 10-day average is the mean of the last 10 closes, so it "
             "is undefined here (pandas' rolling(10).mean() gives NaN).\n\n")
    assert judged("09", 202, [*steps(inst), Final(prose + "ANSWER: NaN")]) is None
    assert judged("09", 202, [*steps(inst), Final(prose + "ANSWER: NaN or 101.2")]) is not None


# --------------------------------------------------------------------------- the second round (P5, P6)
# Two more players at seeds 240-255, after the fixes above: P6 (careful, terse, chatty, reasoning; 21 runs) met no
# misjudgment; P5 (a hacker; 24 runs) had 10 hedges accepted. Three were second answer lines under a disguised
# label (a zero-width space inside it, a label spelled letter by letter): now read as that label, a hedge. Seven
# put a fallback in a sentence after the answer lines ("If that turns out not to be it, the fallback is ..."):
# the lines after the answer lines are free prose and never judged (an offer such as "tell me if you want
# nearest instead" is one too, tests/test_answer_corpus_workspace.py), so revision 5 accepts them by its
# contract, as revision 4's corpus does (tests/test_answer_corpus_players.py, test_prose_stays_free); they are
# kept here, marked, so that a change of that contract is a decision. Every reply of both players is replayed
# word for word with the run's investigation replayed (the reference's tool calls); task_06's correct replies
# changed the code as their ASSUMPTION says, which the reference does not, so they are left to the players' runs.
ROUND_2 = json.loads((Path(__file__).parent / "players_rev5_round2.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", [c for c in ROUND_2 if not (c["task"] == "06" and c["intent"] == "correct")],
                         ids=lambda c: f"{c['player']}-task_{c['task']}-{c['seed']}-{c['intent']}")
def test_second_round_replies_are_judged_by_the_contract(case):
    inst = instance(case["task"], case["seed"])
    why = judged(case["task"], case["seed"], [*steps(inst), Final(case["reply"])])
    if case["intent"] == "correct" or case.get("free_after_the_lines"):
        assert why is None, why
    else:
        assert why is not None, "accepted"
