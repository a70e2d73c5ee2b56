"""Answer lines: the labelled lines of a reply that revision 3's answer tasks judge, and nothing else.

A prompt states the form of its answer: labelled lines at the end of the reply, one fact each
(``ANSWER: 8288``; ``VALUE: 4197`` and ``FUNCTION: shop/shipping/banded.py:fee``). The reply's
other text is free and never judged: it may reason, name every other candidate to rule it out,
quote logs and add side figures.

Reading is tolerant of form and strict on content:

- a line counts wherever it stands after the reasoning block (``<think>...</think>``; see
  :func:`~pytest_agentic.run.answers.final_claim`), in or out of a code block: the prompt asks for
  the lines at the end, but a sign-off or an offer after them is free text like the rest;
- the label is matched whatever its case and spacing, after list bullets, numbers, quote markers,
  heading marks or an emoji, inside Markdown emphasis or a code span (``**Answer:** `8288```, ``> - answer : 8288``);
- the value loses its emphasis, code spans, HTML and LaTeX wrappers, surrounding quotes, a
  trailing period and a note after it, in brackets or after a dash (``8288 (from config/v2)``,
  ``4197 — the banded fee``); numbers may be grouped (``1,790``) and carry their unit
  (``1790 cents``, ``port 8288``);
- a value must hold exactly one candidate: two lines of one label that disagree, or one line
  that offers two candidates (``8288 or 8693``, or a note that offers one with a word such as
  "or", "maybe", "if", "also", "both": ``8288 (or 8693 on old hosts)``), is a hedge and fails
  as a wrong answer; a note may name another candidate to set it aside (``8288 (not 8693)``);
- a missing line, or one that holds no candidate, fails as ``wrong_answer`` with the tag
  ``answer_format`` (:data:`TAG`): the reply was not in the stated form, which is not the same
  thing as a wrong value.

The reader is deterministic, written by hand: the form is this project's own contract, and
no parsing library knows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, NoReturn

from .answers import final_claim, markup_removed

#: The run tag of a reply whose answer line is missing or unreadable (a ``wrong_answer``).
TAG = "answer_format"
#: How a checker's message starts when the reply is not in the stated form (see :func:`unreadable`).
_PREFIX = f"{TAG}: "

#: What may stand before a label: indentation, quote markers, list bullets and numbers, heading marks, an
#: emoji or another symbol ("\u2705 ANSWER: 8288").
_LEAD = r"^[ \t]*(?:(?:>|[-*+\u2022]|\d{1,2}[.)]|#{1,6}|[^\w\s`*_<])[ \t]*)*"
_WRAP = r"(?:\*\*|__|[*_`])*"
_NOTE = re.compile(r"\s*(?:\([^()]*\)|\[[^\[\]]*\])\s*|\s+(?:\u2014|\u2013|--?)\s+.*$")
#: Words by which a note offers another candidate: "(or 8693 on old hosts)", "(check 8693 too)".
_HEDGE = re.compile(r"\b(?:or|maybe|perhaps|possibly|probably|alternatively|either|might|could|unless|if|also|both|too|"
                    r"as well)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:[,_]\d{3})+(?![\d])|(?<![\w.])\d+(?:\.\d+)?(?![\w])")


class Line(NamedTuple):
    """One answer line."""

    label: str
    #: The value, clean of markup and without its note.
    value: str
    #: What the line adds in brackets or after a dash ("from config/v2"), or "".
    note: str
    #: The whole value as written, clean of markup, note included: what a free-text rule reads.
    text: str


def unreadable(message: str) -> NoReturn:
    """Fail a reply that is not in the stated form: ``wrong_answer`` with the tag ``answer_format``."""
    raise AssertionError(_PREFIX + message)


def is_format_failure(reason: str | None) -> bool:
    """Whether a checker's message (``AssertionError: ...``, first line) says the form was not kept."""
    return bool(reason and re.match(rf"(?:[\w.]*Error: )?{_PREFIX}", reason))


def _clean(value: str) -> str:
    """A value without Markdown emphasis, code spans, typographic quotes, surrounding quotes and a final period."""
    value = re.sub(r"(?<=\d)[\u202f\u00a0\u2009](?=\d{3}(?!\d))", "", value)  # 1\u202f790
    value = re.sub(r"\*\*|`|~~", "", value)
    # __bold__, _italic_, *italic*; not the underscores of a name (shipping/__init__.py)
    value = re.sub(r"(?<![\w/.])(__|_|\*)(?=\S)(.+?)(?<=\S)\1(?![\w/.])", r"\2", value).strip("*")
    value = value.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    return value.strip().strip("\"'").strip().rstrip(".").strip().strip("\"'").strip()


def find(text: str, label: str) -> list[Line]:
    """Every line of ``text`` labelled ``label`` (a regular expression; spaces match any spacing or
    ``_``), after its reasoning block, as (label, value, note)."""
    pattern = label.replace(" ", r"[\s_-]*")
    line = re.compile(rf"{_LEAD}{_WRAP}[ \t]*({pattern})[ \t]*{_WRAP}[ \t]*[:=\uff1a][ \t]*(?:\*\*|[*`])*(.*)$",
                      re.IGNORECASE | re.MULTILINE)
    out = []
    for m in line.finditer(markup_removed(final_claim(text))):  # <p><b>ANSWER:</b> 8288</p> is a line too
        raw = _clean(m.group(2))
        notes = [n.strip(" ()[]\u2014\u2013-") for n in _NOTE.findall(raw)]
        value = _clean(_NOTE.sub(" ", raw))
        out.append(Line(m.group(1), " ".join(value.split()), " ".join(notes), " ".join(raw.split())))
    return out


def number(value: str) -> list[int | float]:
    """The numbers a value holds, grouping and units allowed: ``1,790 cents`` is [1790]."""
    out: list[int | float] = []
    for m in _NUMBER.finditer(value):
        digits = re.sub(r"[,_]", "", m.group())
        out.append(float(digits) if "." in digits else int(digits))
    return out


def read(text: str, label: str, shown: str, candidates: Callable[[str], Sequence[Any]]) -> Any:
    """The one candidate the ``label`` lines of ``text`` give; fails the run otherwise.

    ``shown`` is the label as the prompt writes it (for messages), ``candidates`` what a value
    offers (numbers, ids, functions). No line, or lines with no candidate: ``answer_format``.
    Lines that disagree, or a line or its note offering a second candidate: a hedge.
    """
    lines = find(text, label)
    if not lines:
        unreadable(f"the reply has no `{shown}` line")
    given = []
    for line in lines:
        found = list(dict.fromkeys(candidates(line.value)))
        if len(found) > 1:
            raise AssertionError(f"the `{shown}` line offers {len(found)} candidates ({line.value!r}): a hedge")
        extra = [c for c in dict.fromkeys(candidates(line.note)) if c not in found]
        if found and extra and _HEDGE.search(line.note):
            raise AssertionError(f"the `{shown}` line's note offers another candidate ({line.note!r}): a hedge")
        given += found
    if not given:
        unreadable(f"the `{shown}` line holds no readable value ({lines[0].value!r})")
    distinct = list(dict.fromkeys(given))
    if len(distinct) > 1:
        raise AssertionError(f"the `{shown}` lines disagree ({', '.join(map(str, distinct))}): a hedge")
    return distinct[0]


def integer(text: str, label: str, shown: str) -> int:
    """The one whole number the ``label`` lines give (``1,790``, ``1790 cents``, ``port 8288``)."""
    return read(text, label, shown, lambda v: [int(n) for n in number(v) if float(n).is_integer()])


def token(text: str, label: str, shown: str, pattern: re.Pattern[str]) -> str:
    """The one token (its group 1, lower-cased) the ``label`` lines give: an event or query id."""
    return read(text, label, shown, lambda v: [m.group(1).lower() for m in pattern.finditer(v)])


def note(model: str, runs: Sequence[Mapping[str, Any]]) -> str | None:
    """The campaign note for a model whose runs were failed for their form, or None."""
    hit = [r for r in runs if (r.get("tags") or {}).get(TAG)]
    if not hit:
        return None
    return (f"model {model!r}: {len(hit)} of {len(runs)} runs gave no readable answer line (wrong_answer, tag "
            f"{TAG}): the reply lacked the labelled line its prompt asks for, or held no value on it, whatever "
            "its prose said; these are not wrong values")


__all__ = ["Line", "TAG", "find", "integer", "is_format_failure", "note", "number", "read", "token", "unreadable"]
