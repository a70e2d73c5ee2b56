"""The form rule and the hedge rule on every answer task (revision 5), at seeds 0, 7 and 8.

Form: every task's reference reply, its answer lines rewritten with a dash or an equals sign for the
colon, bold labels, code spans, emphasis, a trailing period, a code fence, lower-case labels, a
``<think>`` block before and a sign-off after them, still passes. Notes: the same lines with a note
(in brackets, after a dash, after "or", other words, alone in brackets on the next line, a footnote),
whatever it says (a near-miss's value, the value in words, nothing at all), fail as ``answer_format``
on every task. Hedge: a near-miss's value as a second candidate in the value itself fails as a hedge.
The tasks and their labels are read from the references, so a task whose lines change is covered as it is.
"""

from __future__ import annotations

import re

import pytest

from pytest_agentic import Final
from pytest_agentic.run import answerlines

from .test_answer_corpus import MODULES, instance, judged

#: An answer line as the references write it: ``LABEL: value``.
_LINE = re.compile(r"^([A-Z][A-Z_]*[A-Z]): (.+)$", re.MULTILINE)

FORMS = {
    "dash": lambda k, v: f"{k} - {v}",
    "equals": lambda k, v: f"{k} = {v}",
    "em_dash": lambda k, v: f"{k} \u2014 {v}",
    "bold_label": lambda k, v: f"**{k}:** {v}",
    "bold_label_dash": lambda k, v: f"**{k}** - {v}",
    "code_span": lambda k, v: f"`{k}: {v}`",
    "lower_case": lambda k, v: f"{k.lower()}: {v}",
    "bullet_equals": lambda k, v: f"- {k}={v}",
    "bold_value_period": lambda k, v: f"{k}: **{v}**.",
    "value_in_code_span": lambda k, v: f"{k}: `{v}`",
}
#: A note on a judged line, whatever it says: each puts the line out of form (revision 5).
NOTES = {
    "in_brackets": lambda v: f"{v} (as asked)",
    "in_square_brackets": lambda v: f"{v} [as asked]",
    "empty_words_in_brackets": lambda v: f"{v} (see above)",
    "after_a_dash": lambda v: f"{v} \u2014 as asked",
    "after_a_hyphen": lambda v: f"{v} - see above",
    "after_or": lambda v: f"{v} or something like it",
    "any_words": lambda v: f"{v} as computed above",
    "number_words": lambda v: f"{v} (eighty-eighty if the legacy file is live)",
    "next_line": lambda v: f"{v}\n(as asked)",
    "footnote": lambda v: f"{v}[^1]",
}
SEEDS = (0, 7, 8)
ANSWER_TASKS = [t for t in MODULES if _LINE.search(instance(t, 0).reference[-1].content)]


def _restyled(text: str, form) -> str:
    return _LINE.sub(lambda m: form(m[1], m[2]), text)


def test_every_answer_task_is_covered():
    assert {"03", "04", "06", "08", "09"} <= set(ANSWER_TASKS)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task", ANSWER_TASKS)
def test_the_form_rule_on_every_task(task, seed):
    inst = instance(task, seed)
    *work, final = inst.reference
    text = final.content
    replies = {name: _restyled(text, form) for name, form in FORMS.items()}
    lines = "\n".join(m[0] for m in _LINE.finditer(text))
    replies["code_fence"] = text.replace(lines, f"```\n{lines}\n```") if lines in text else text
    replies["sign_off_after"] = f"{text}\n\nLet me know if you want anything else."
    replies["think_before"] = f"<think>Maybe it is something else (or not).</think>\n{text}"
    assert all(r != text for n, r in replies.items()), "a form left the reply as it was"
    rejected = {name: why for name, reply in replies.items() if (why := judged(task, seed, [*work, Final(reply)]))}
    assert not rejected, rejected


def _replaced(text: str, label: str, value) -> str:
    return re.sub(rf"^{label}: (.+)$", lambda m: f"{label}: {value(m[1])}", text, flags=re.MULTILINE)


def _second_candidates(task: str, seed: int) -> dict[str, str]:
    """Per label, a value some near-miss gives on that line, that is a candidate of the line's closed form:
    alone on the reference's line, it fails as a wrong value (not as ``answer_format``)."""
    inst = instance(task, seed)
    *work, final = inst.reference
    ours = {m[1]: m[2] for m in _LINE.finditer(final.content)}
    out: dict[str, str] = {}
    for solution in inst.near_misses.values():
        if not isinstance(solution[-1], Final):
            continue
        for m in _LINE.finditer(solution[-1].content):
            value = re.split(r" \(| \u2014 ", m[2])[0]
            if m[1] not in ours or m[1] in out or value in ours[m[1]]:
                continue
            why = judged(task, seed, [*work, Final(_replaced(final.content, m[1], lambda _: value))])
            if why is not None and not answerlines.is_format_failure(why):
                out[m[1]] = value
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task", ANSWER_TASKS)
def test_every_note_puts_a_line_out_of_form_on_every_task(task, seed):
    """Revision 5: no note is read, so a note fails as ``answer_format`` whatever it says: the forms above,
    and a near-miss's value set aside in one ("not X", "or X", "alt. X"), on each judged line in turn."""
    *work, final = instance(task, seed).reference
    others = _second_candidates(task, seed)
    for label in (m[1] for m in _LINE.finditer(final.content)):
        notes = dict(NOTES)
        if label in others:
            notes |= {f"{words}_near_miss": (lambda v, w=words: f"{v} ({w.format(others[label])})")
                      for words in ("not {}", "or {}", "alt. {}")}
        for name, note in notes.items():
            reply = _replaced(final.content, label, note)
            if name == "footnote":
                reply += "\n\n[^1]: as read above."
            why = judged(task, seed, [*work, Final(reply)])
            assert why is not None and answerlines.is_format_failure(why), (name, reply, why)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task", ANSWER_TASKS)
def test_the_hedge_rule_on_every_task(task, seed):
    """A second candidate in the value itself stays a hedge (not ``answer_format``)."""
    *work, final = instance(task, seed).reference
    others = _second_candidates(task, seed)
    assert others, f"task_{task} has no near-miss with another candidate on an answer line"
    for label, other in others.items():
        for joined in ("{} or {}", "{}, {}")[:1 if label == "NAMES" else 2]:  # NAMES: a comma joins one set
            reply = _replaced(final.content, label, lambda v: joined.format(v, other))
            why = judged(task, seed, [*work, Final(reply)])
            assert why is not None and not answerlines.is_format_failure(why), (label, reply, why)
            assert "hedge" in why, (label, reply, why)
