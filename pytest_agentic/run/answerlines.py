"""Answer lines: the labelled lines of a reply that the answer tasks judge, and nothing else.

A prompt states the form of its answer: labelled lines at the end of the reply, one fact each
(``ANSWER: 8288``; ``VALUE: 4197`` and ``FUNCTION: shop/shipping/banded.py:fee``). Every judged
line has a closed form: an id, a number, an identifier, a path, or one word from a set the prompt
defines; a task gives the parser of that form (``Field.candidates``) and the form as written
(``Field.form``). The reply's other text is free and never judged: it may reason, name every other
candidate to rule it out, quote logs and add side figures, above the answer lines.

**The form rule** (revision 5, the same on every task): a judged line holds its value alone.

- a line counts wherever it stands after the reasoning block (``<think>...</think>``; see
  :func:`~pytest_agentic.run.answers.final_claim`), in or out of a code block: the prompt asks for
  the lines at the end, but a sign-off or an offer on the lines after them is free text like the rest;
- the label is matched whatever its case and spacing, after list bullets, numbers, quote markers,
  heading marks or an emoji, inside Markdown emphasis or a code span (``**Answer:** `8288```, ``> - answer : 8288``);
- the label's separator may be a colon, a dash or an equals sign (:data:`SEPARATORS`:
  ``ANSWER: 8288``, ``ANSWER - 8288``, ``ANSWER = 8288``; also a full-width colon, an en or em dash);
- the value may keep its emphasis, code spans, HTML and LaTeX wrappers, surrounding quotes and a
  trailing period; numbers may be grouped (``1,790``) and carry the unit their form allows
  (``1790 cents``, ``port 8288``);
- **a note puts the line out of form**, whatever it says, because no note is read: one in brackets
  (``8288 (from config/v2)``), after a spaced dash (``4197 \u2014 the banded fee``), a note alone in
  brackets on the line right under it, or a footnote the value points to (``8288[^1]``)
  (:func:`_attached_notes`); so do words beyond the value's closed form (``8288 or eighty-eighty``,
  ``8288 from the new file``): the line fails as ``answer_format`` (:func:`alone`);
- a line ends where another of the task's labels starts (``ASSUMPTION: ... QUESTION: ...`` on one
  line is two lines): each line is read only under its own label.

**The hedge rule** (strict, the same on every task): the judged lines together name exactly one
candidate of each judged kind. A line is a hedge, and fails as a wrong answer, when its value offers
two candidates (``8288 or 8693``), when two lines of one label disagree, or when a judged line names
any candidate of a judged kind other than the one given for that kind (a function on the value's
line). A candidate is what the kind's parser reads (its ``mentions``, by default its ``candidates``);
no word ("or", "not", "maybe") is read. Prompts say that each answer line holds only its value
(:data:`ALONE`).

A missing line, one that holds no candidate, or one out of form fails as ``wrong_answer`` with the tag
``answer_format`` (:data:`TAG`): the reply was not in the stated form, which is not the same thing
as a wrong value.

The reader is deterministic, written by hand: the form is this project's own contract, and
no parsing library knows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, NamedTuple, NoReturn

from .answers import final_claim, markup_removed

#: The run tag of a reply whose answer line is missing or unreadable (a ``wrong_answer``).
TAG = "answer_format"
#: How a checker's message starts when the reply is not in the stated form (see :func:`unreadable`).
_PREFIX = f"{TAG}: "
#: What may stand between a label and its value: a colon, a dash or an equals sign (and their
#: full-width colon, en and em dash variants).
SEPARATORS = (":", "-", "=")
_SEPARATOR = r"(?::|\uff1a|=|(?:--?|\u2013|\u2014)(?=\s))"  # a dash stands apart: "answer-wise" is a word

#: What may stand before a label: indentation, quote markers, list bullets and numbers, heading marks, an
#: emoji or another symbol ("\u2705 ANSWER: 8288").
_LEAD = r"^[ \t]*(?:(?:>|[-*+\u2022]|\d{1,2}[.)]|#{1,6}|[^\w\s`*_<])[ \t]*)*"
_WRAP = r"(?:\*\*|__|[*_`])*"
#: A function's argument list glued to its name (``fee()``, ``fee(order)``): part of the value, not a note.
_ARGS = r"\((?:\s*\w+\s*(?:,\s*\w+\s*)*)?\)"
_PAREN = r"\((?:[^()]|\([^()]*\))*\)"  # one level of nesting: "(via quote())"
_BRACKET = r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]"
#: A note: in brackets (not a glued argument list), one left open to the end, or after a spaced dash.
_NOTE = re.compile(rf"\s*(?:(?<![A-Za-z_]){_PAREN}|(?<=[A-Za-z_])(?!{_ARGS}){_PAREN}|{_BRACKET})\s*"
                   r"|\s+[(\[][^()\[\]]*$|\s+(?:\u2014|\u2013|--?)\s+.*$")
#: The sentence every answer task's prompt says, after its answer lines (revision 5).
ALONE = ("Put any explanation above the answer lines: each answer line holds only its value, with no note, "
         "bracket, comment or other words after it.")
#: An integer as a line may write it, grouped or not (``8288``, ``1,790``): a piece of a :attr:`Field.form`.
INTEGER = r"[-+]?(?:\d{1,3}(?:[,_]\d{3})+|\d+)"
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:[,_]\d{3})+(?![\d])|(?<![\w.])\d+(?:\.\d+)?(?![\w])")

#: A closed form's parser: the candidates a text offers, in order, each comparable (an int, an id).
Parser = Callable[[str], Sequence[Hashable]]


class Line(NamedTuple):
    """One answer line."""

    label: str
    #: The value, clean of markup and without its note.
    value: str
    #: What the line adds in brackets or after a dash ("from config/v2"), or "".
    note: str
    #: The whole value as written, clean of markup, note included.
    text: str


class Field(NamedTuple):
    """One judged line of a task's answer: its label and the parser of its closed form."""

    #: The label as a regular expression (spaces match any spacing, ``_`` or ``-``), any case: "answer".
    label: str
    #: The label as the prompt writes it, for messages: "ANSWER:".
    shown: str
    #: What a value offers: the candidates of the closed form (ports, ids, functions) read from it.
    candidates: Parser
    #: What a judged line names of this kind, for the hedge rule; ``None``: the same as ``candidates``.
    #: A task gives a wider reader where a looser spelling still names a candidate ("standard.fee").
    mentions: Parser | None = None
    #: Whether the reply must hold this line; an optional field without a line is given as None, and
    #: then any candidate of its kind on another judged line is a hedge.
    required: bool = True
    #: The value as its closed form writes it: a regular expression (any case) of one candidate with the
    #: words that may stand around it (a unit, ``1790 cents``; ``port 8288``). A word the line holds beyond
    #: it puts the line out of form (:func:`alone`). ``None``: any words (a refusal is words).
    form: str | None = None


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


def _labelled(label: str) -> str:
    """A label as it may be written at the start of a line, up to and with its separator."""
    pattern = label.replace(" ", r"[\s_-]*")
    return rf"{_WRAP}[ \t]*({pattern})[ \t]*{_WRAP}[ \t]*{_SEPARATOR}[ \t]*(?:\*\*|[*`])*"


def _split(text: str, labels: Sequence[str]) -> str:
    """``text`` with a line break before every label of ``labels`` that follows another on its line:
    ``ASSUMPTION: x QUESTION: y`` becomes two lines, so each is read only under its own label."""
    heads = [(label, re.compile(_LEAD + _labelled(label), re.IGNORECASE)) for label in labels]
    out = []
    for line in text.split("\n"):
        for label, head in heads:
            m = head.match(line)
            if m is None:
                continue
            others = "|".join(f"(?:{o})" for o in labels if o != label)
            if others:
                inner = re.compile(r"(?<=[\s(\[;,.])" + _labelled(others), re.IGNORECASE)
                rest = inner.sub(lambda x: "\n" + x.group(0), line[m.end():])
                line = line[:m.end()] + rest
            break
        out.append(line)
    return "\n".join(out)


#: Letters of other scripts drawn like Latin ones (Cyrillic, Greek) and full-width Latin letters, read as the
#: Latin letter a person sees: a label spelled ``АNSWER`` with a Cyrillic А is an ``ANSWER:`` line (a player
#: hid the decoy under one), and a value is read as it reads. Digits are not folded (a value in another script's
#: digits is not in its closed form).
_LOOKALIKE = str.maketrans(
    "АВСЕНІЈКМОРЅТХУаеіјорсѕухԁһӏ" "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧον"
    + "".join(chr(c) for c in range(0xFF21, 0xFF3B)) + "".join(chr(c) for c in range(0xFF41, 0xFF5B)),
    "ABCEHIJKMOPSTXYaeijopcsyxdhl" "ABEZHIKMNOPTYXov"
    + "".join(chr(c) for c in range(ord("A"), ord("Z") + 1)) + "".join(chr(c) for c in range(ord("a"), ord("z") + 1)))
#: An HTML comment: hidden when the reply is shown, so a judged line inside one is read as a line of its own.
_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)", re.DOTALL)


#: Characters drawn as nothing (zero-width spaces and joiners, the word joiner, a byte-order mark, a soft hyphen).
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
#: A label spelled out letter by letter at the start of a line (``A N S W E R:``, ``Q_U_E_S_T_I_O_N:``).
_SPELLED = re.compile(r"^([^\w\n]*)((?:[A-Za-z][ \t_.-]){2,}[A-Za-z])(?=[ \t]*(?:[:=\uff1a]|[-\u2013\u2014]\s))",
                      re.MULTILINE)


def _as_read(text: str) -> str:
    """The reply as its answer lines are read: look-alike letters as Latin, invisible characters gone, a label
    spelled out letter by letter as the word, and each HTML comment's text also on lines of its own after the
    reply (left in place too, where it is a note on its line)."""
    text = text.translate(_LOOKALIKE).translate(_INVISIBLE)
    text = _SPELLED.sub(lambda m: m.group(1) + re.sub(r"[ \t_.-]", "", m.group(2)), text)
    hidden = [m.group(1) for m in _COMMENT.finditer(text)]
    return text + "".join(f"\n{inner}\n" for inner in hidden)


def find(text: str, label: str, others: Sequence[str] = ()) -> list[Line]:
    """Every line of ``text`` labelled ``label`` (a regular expression; spaces match any spacing,
    ``_`` or ``-``), after its reasoning block, as (label, value, note, text).

    ``others``: the task's other labels; a line ends where one of them starts (``ASSUMPTION: x
    QUESTION: y`` gives ``x`` under ``assumption`` and ``y`` under ``question``)."""
    body = markup_removed(_as_read(final_claim(text)))  # <p><b>ANSWER:</b> 8288</p> is a line too
    if others:
        body = _split(body, [label, *others])
    line = re.compile(_LEAD + _labelled(label) + "(.*)$", re.IGNORECASE | re.MULTILINE)
    out = []
    for m in line.finditer(body):
        raw = _clean(m.group(2) + "".join(f" ({n})" for n in _attached_notes(body, m.end(), m.group(2))))
        notes = [n.strip(" ()[]\u2014\u2013-") for n in _NOTE.findall(raw)]
        value = _clean(_NOTE.sub(" ", raw))
        out.append(Line(m.group(1), " ".join(value.split()), " ".join(notes), " ".join(raw.split())))
    return out


#: A line that is a note alone, in brackets ("(or q-283a)", "- [alt. standard.py:fee]"), after list marks.
_NOTE_LINE = re.compile(r"^[ \t>*+\u2022-]*(?:\*\*|[*_`])*[ \t]*(\([^\n]*\)|\[[^\n]*\])[ \t]*(?:\*\*|[*_`])*[ \t.]*$")
#: A line right under a judged line that goes on from it: a condition or an alternative ("unless the legacy
#: file is live, in which case 9109"), the line's note as much as one in brackets.
_GOES_ON = re.compile(r"^[ \t>*+\u2022-]*(?:\*\*|[*_`])*[ \t]*((?:unless|otherwise|or|else|alternatively|failing that|"
                      r"in which case|except)\b[^\n]*)$", re.IGNORECASE)
#: A footnote's text (``[^1]: ...``).
_FOOTNOTE_DEF = re.compile(r"^[ \t]*\[\^([^\]\s]+)\]:[ \t]*(.*)$", re.MULTILINE)
_FOOTNOTE_REF = re.compile(r"\[\^([^\]\s]+)\]")


def _attached_notes(body: str, end: int, value: str) -> list[str]:
    """The notes of a judged line written off the line: lines that are a note alone right under it (no blank
    line between), in brackets or going on from it (``unless ...``, ``or ...``), the text of the footnotes its
    value refers to (``q-e90f[^1]`` and ``[^1]: ...``) and of every footnote written below it. Each is the
    line's note as much as one in brackets on the line, and puts it out of form (:func:`alone`)."""
    notes = []
    for following in body[end:].split("\n")[1:]:
        m = _NOTE_LINE.match(following)
        if m is None:
            goes_on = _GOES_ON.match(following)
            if goes_on is not None:
                notes.append(goes_on.group(1).strip())
            break
        notes.append(m.group(1)[1:-1].strip())
    # A footnote written below the line is its note too, whatever points to it: a footnote is a note, and one
    # the prose above points to ("cache[^1]", then "[^1]: if that is ruled out, f5eb1d20") still reads as
    # the answer's condition. Explanations, footnotes included, go above the answer lines.
    for m in _FOOTNOTE_DEF.finditer(body, end):
        if m.group(2).strip():
            notes.append(m.group(2).strip())
    for ref in _FOOTNOTE_REF.findall(value):
        defined = re.search(rf"^[ \t]*\[\^{re.escape(ref)}\]:[ \t]*(.*)$", body, re.MULTILINE)
        if defined:
            notes.append(defined.group(1).strip())
    return [n.replace("(", " ").replace(")", " ") for n in notes if n]


def alone(line: Line, shown: str, form: str | None = None) -> None:
    """Fail a judged line that holds more than its value, as ``answer_format``: a note (in brackets, after a
    spaced dash, alone in brackets on the line under it, a footnote the value points to), whatever it says,
    or a word beyond ``form``, the value's closed form as written (``8288 or eighty-eighty``)."""
    if line.note.strip():
        unreadable(f"the `{shown}` line carries a note ({line.text!r}): a judged line holds its value alone, "
                   "and no note is read")
    if form is not None:
        rest = re.sub(form, " ", line.value, flags=re.IGNORECASE)
        if re.search(r"[^\W_]", rest):
            unreadable(f"the `{shown}` line holds more than its value ({line.value!r}): a judged line holds its "
                       "value alone, in its closed form")


def number(value: str) -> list[int | float]:
    """The numbers a value holds, grouping and units allowed: ``1,790 cents`` is [1790]."""
    out: list[int | float] = []
    for m in _NUMBER.finditer(value):
        digits = re.sub(r"[,_]", "", m.group())
        out.append(float(digits) if "." in digits else int(digits))
    return out


def _distinct(items: Sequence[Hashable]) -> list[Hashable]:
    return list(dict.fromkeys(items))


def sheet(text: str, *fields: Field) -> tuple[Any, ...]:
    """The one candidate each field's lines give, in the order of ``fields``; fails the run otherwise.

    The form rule and the hedge rule of this module's docstring, applied to all ``fields`` at once:
    no line of a required field, lines with no candidate, a line with a note or with words beyond its
    field's form, fail as ``answer_format``; a value with two candidates, lines of one label that
    disagree, or any line that names a candidate of any field other than the one given for that field,
    fails as a hedge."""
    labels = [f.label for f in fields]
    read = {f.label: find(text, f.label, [o for o in labels if o != f.label]) for f in fields}
    given: list[Any] = []
    for f in fields:
        lines = read[f.label]
        if not lines and not f.required:
            given.append(None)
            continue
        if not lines:
            unreadable(f"the reply has no `{f.shown}` line")
        for line in lines:  # a line that offers a candidate, in its value or its note, is judged
            if line.note.strip() and f.candidates(line.text):
                alone(line, f.shown)
        found: list[Hashable] = []
        for line in lines:
            offered = _distinct(f.candidates(line.value))
            if len(offered) > 1:
                raise AssertionError(f"the `{f.shown}` line offers {len(offered)} candidates ({line.value!r}): a hedge")
            found += offered
        if not found:
            unreadable(f"the `{f.shown}` line holds no readable value ({lines[0].value!r})")
        distinct = _distinct(found)
        if len(distinct) > 1:
            raise AssertionError(f"the `{f.shown}` lines disagree ({', '.join(map(str, distinct))}): a hedge")
        given.append(distinct[0])
    for f, answer in zip(fields, given):
        mentions = f.mentions or f.candidates
        for g in fields:
            for line in read[g.label]:
                extra = [c for c in _distinct(mentions(line.value)) if c != answer]
                if extra:
                    raise AssertionError(
                        f"the `{g.shown}` line names {extra[0]} besides "
                        f"{'nothing' if answer is None else answer} ({line.text!r}): "
                        "a second candidate on a judged line is a hedge")
    for f in fields:  # one candidate, no hedge: now the words beyond the value's form
        for line in read[f.label]:
            if f.candidates(line.value):
                alone(line, f.shown, f.form)
    return tuple(given)


def read(text: str, label: str, shown: str, candidates: Parser, form: str | None = None) -> Any:
    """The one candidate the ``label`` lines of ``text`` give (a sheet of one field; see :func:`sheet`)."""
    return sheet(text, Field(label, shown, candidates, form=form))[0]


def integers(value: str) -> list[int]:
    """The whole numbers a value holds (``1,790``, ``1790 cents``, ``port 8288``): an integer's closed form."""
    return [int(n) for n in number(value) if float(n).is_integer()]


def integer(text: str, label: str, shown: str, form: str = INTEGER) -> int:
    """The one whole number the ``label`` lines give (``1,790``; with the words ``form`` allows: ``port 8288``)."""
    return read(text, label, shown, integers, form)


def tokens(pattern: re.Pattern[str]) -> Parser:
    """The parser of a token form (an event or query id): every match's group 1, lower-cased."""
    return lambda value: [m.group(1).lower() for m in pattern.finditer(value)]


def token(text: str, label: str, shown: str, pattern: re.Pattern[str], form: str | None = None) -> str:
    """The one token (its group 1, lower-cased) the ``label`` lines give: an event or query id; alone on its
    line, or with the words ``form`` allows (by default none)."""
    return read(text, label, shown, tokens(pattern), pattern.pattern if form is None else form)


def note(model: str, runs: Sequence[Mapping[str, Any]]) -> str | None:
    """The campaign note for a model whose runs were failed for their form, or None."""
    hit = [r for r in runs if (r.get("tags") or {}).get(TAG)]
    if not hit:
        return None
    return (f"model {model!r}: {len(hit)} of {len(runs)} runs gave no readable answer line (wrong_answer, tag "
            f"{TAG}): the reply lacked the labelled line its prompt asks for, or held no value on it, whatever "
            "its prose said; these are not wrong values")


__all__ = ["ALONE", "INTEGER", "SEPARATORS", "TAG", "Field", "Line", "Parser", "alone", "find", "integer", "integers",
           "is_format_failure", "note", "number", "read", "sheet", "token", "tokens", "unreadable"]
