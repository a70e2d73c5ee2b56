"""The form rule and the hedge rule on every answer task (revision 4), at seeds 0, 7 and 8.

Form: every task's reference reply, its answer lines rewritten with a dash or an equals sign for the
colon, bold labels, code spans, a code fence, lower-case labels, a note in brackets and a sign-off
after them, still passes. Hedge: the same lines with a near-miss's value added in a note ("not X",
"or X", "alt. X"; on the line, alone on the next line, or in a footnote) fail as a wrong answer whose message says hedge (not answer_format), on every task.
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
    "note_in_brackets": lambda k, v: f"{k}: {v} [as asked]",
    "bullet_equals": lambda k, v: f"- {k}={v}",
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
    replies["note_on_its_own_line"] = _LINE.sub(lambda m: f"{m[0]}\n(as asked)", text)
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


#: Tasks whose lines do not yet follow the hedge rule: task_10's CAUSE: line is revision 3's sentence,
#: which issue 24's second engineer (branch issue-24b) turns into closed-form lines. Strict: when it
#: passes, drop the mark.
_PENDING: dict[str, str] = {}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task", [pytest.param(t, marks=pytest.mark.xfail(reason=_PENDING[t], strict=True))
                                  if t in _PENDING else t for t in ANSWER_TASKS])
def test_the_hedge_rule_on_every_task(task, seed):
    *work, final = instance(task, seed).reference
    others = _second_candidates(task, seed)
    assert others, f"task_{task} has no near-miss with another candidate on an answer line"
    for label, other in others.items():
        for words in ("not {}", "or {}", "alt. {}"):
            reply = _replaced(final.content, label, lambda v: f"{v} ({words.format(other)})")
            why = judged(task, seed, [*work, Final(reply)])
            assert why is not None and "hedge" in why and not answerlines.is_format_failure(why), (label, reply, why)
        # The note written off the line is the line's note too: alone on the next line, or a footnote
        # (independent players' task_10 hedges at seeds 71 and 72).
        for name, off_line in (("next_line", lambda v: f"{v}\n(or {other})"),
                               ("footnote", lambda v: f"{v}[^1]")):
            reply = _replaced(final.content, label, off_line)
            if name == "footnote":
                reply += f"\n\n[^1]: {other} is as likely."
            why = judged(task, seed, [*work, Final(reply)])
            assert why is not None and "hedge" in why and not answerlines.is_format_failure(why), (name, reply, why)
