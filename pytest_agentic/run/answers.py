"""Reading the claim a free-text answer makes, for the checkers.

An answer judged by its claim may reason, rule out alternatives, add labelled
side figures and caveats, use Markdown or number words, and put the answer
first or last. These helpers turn such prose into plain clauses and tell, for
each number it mentions, whether the answer asserts it or sets it aside
(``8589 is the backup's, not in use``; ``not 9448``; ``the old 8589``) or
hedges towards it (``or maybe 8589``). They are deterministic text rules,
written by hand: no library reads claims, and an LLM judge is not allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
          "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}
_WORD_RE = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)


_REASONING = r"think|thinking|thought|reasoning|reflection|scratchpad|analysis"
_REASONING_BLOCK = re.compile(rf"<({_REASONING})\b[^<>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_REASONING_CLOSE = re.compile(rf"</(?:{_REASONING})\s*>", re.IGNORECASE)
_REASONING_OPEN = re.compile(rf"<(?:{_REASONING})\b[^<>]*>", re.IGNORECASE)
_HARMONY_FINAL = re.compile(r"<\|channel\|>\s*final\s*<\|message\|>", re.IGNORECASE)


def final_claim(text: str) -> str:
    """The part of a final message that makes the claim: what follows the model's reasoning.

    A reasoning model may weigh every candidate in a ``<think>`` (``<thinking>``, ``<reasoning>``)
    block before it answers; that trace is not the answer. A closing tag with no opening one
    (the chat template opened the block) ends the trace too. A block that is never closed holds
    no answer: the model stopped while still reasoning, so nothing after its opening tag counts
    (a message that is only an unterminated block reads as no answer at all).
    """
    final = list(_HARMONY_FINAL.finditer(text))
    if final:
        text = text[final[-1].end():]
    text = _REASONING_BLOCK.sub("\n", text)
    closed = list(_REASONING_CLOSE.finditer(text))
    if closed:
        text = text[closed[-1].end():]
    opened = _REASONING_OPEN.search(text)
    if opened:
        text = text[:opened.start()]
    return text.strip()


_HTML_BREAK = re.compile(r"<(?:br|p|div|li|tr|ul|ol|table|h\d)\b[^<>]*/?>|</(?:p|div|li|tr|ul|ol|table|h\d)>",
                         re.IGNORECASE)
_HTML_TAG = re.compile(r"</?[a-z][a-z0-9]*(?:\s[^<>]*)?/?>", re.IGNORECASE)
_ENTITIES = {"&nbsp;": " ", "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'"}
#: LaTeX that wraps an answer: \boxed{4197}, \text{cents}, $4197$, \(4197\)
_LATEX_WRAP = re.compile(r"\\(?:boxed|text|mathrm|textbf|mathbf|texttt|mathtt)\s*\{([^{}]*)\}")
_LATEX_MATH = re.compile(r"\$\$|\\[()\[\]]|(?<![\w$])\$(?=[^$\n]{1,60}\$(?![\w$]))|(?<=[^\s$])\$(?![\w$])")


def markup_removed(text: str) -> str:
    """``text`` without HTML tags and entities or LaTeX wrappers: ``<b>9763</b>``, ``\\boxed{9763}``."""
    text = _HTML_BREAK.sub("\n", text)
    text = _HTML_TAG.sub("", text)
    for entity, char in _ENTITIES.items():
        text = text.replace(entity, char)
    for _ in range(3):  # nested: \boxed{\text{...}}
        text = _LATEX_WRAP.sub(r"\1", text)
    text = text.replace("\\lceil", " ceil(").replace("\\rceil", ")").replace("\\lfloor", " floor(").replace("\\rfloor", ")")
    text = text.replace("\\,", " ").replace("\\ ", " ").replace("\\%", "%").replace("\\$", "$")
    return _LATEX_MATH.sub(" ", text)


#: A key of a JSON object or Python dict: ``"backup_port": 8589`` reads as the line ``backup port: 8589``.
_JSON_KEY = re.compile(r"[{,]?\s*[\"']([A-Za-z][A-Za-z0-9_ -]{0,40})[\"']\s*:(?!//)\s*")
_FENCED = re.compile(r"^[ \t]*```[^\n]*\n.*?^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)


def outside_code(text: str) -> str:
    """The claim of ``text`` without its fenced code blocks: quoted files and logs, the evidence."""
    return _FENCED.sub("\n", final_claim(text))


def plain(text: str) -> str:
    """``text`` without Markdown, with typographic quotes plain, digits for number words, no digit grouping."""
    text = markup_removed(final_claim(text))
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = text.replace("\u00a0", " ").replace("\u2011", "-").replace("\u2010", "-")
    text = re.sub(r"```[^\n]*\n?", "\n", text)  # code fences: keep what is inside
    text = _JSON_KEY.sub(lambda m: "\n" + m.group(1).replace("_", " ") + ": ", text)  # {"backup_port": 8589}
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links
    text = re.sub(r"^\s{0,3}(?:#{1,6}|>+)\s*", "", text, flags=re.MULTILINE)  # headings, quotes
    text = re.sub(r"^\s*[-*+]\s+", "", text, flags=re.MULTILINE)  # bullets
    numbered = re.compile(r"^\s*\d{1,3}[.)]\s+", re.MULTILINE)
    if len(numbered.findall(text)) >= 2:  # a numbered list (one "9763. " alone is an answer, not an item)
        text = numbered.sub("", text)
    text = re.sub(r"^\s*\|?\s*:?-{3,}.*$", "", text, flags=re.MULTILINE)  # table rules
    text = text.replace("|", " ")  # a table row reads as one clause
    text = re.sub(r"(\*\*|__|[*`~])", "", text)  # emphasis and code spans
    text = re.sub(r"(?<![\w*])_(?=\w)|(?<=\w)_(?![\w*])", "", text)  # _italic_
    text = _WORD_RE.sub(lambda m: str(_WORDS[m.group(1).lower()]), text)
    return re.sub(r"(?<=\d)[,_\u202f](?=\d{3}(?!\d))", "", text)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_CLAUSE_BREAK = re.compile(r"\s*[;,()\[\]]\s*|\s+[\u2014\u2013-]+\s+|\s+(?=(?:but|however|whereas|while|although|"
                           r"though|yet)\b)", re.IGNORECASE)


def sentences(text: str) -> list[list[str]]:
    """The clauses of each sentence of a plain text (commas, semicolons, brackets, dashes, 'but' split)."""
    out = []
    for sentence in _SENTENCE_END.split(text):
        clauses = [c.strip() for c in _CLAUSE_BREAK.split(sentence) if c and c.strip()]
        if clauses:
            out.append(clauses)
    return out


#: Words that set the number they point at aside. Forward cues reject the number after them
#: ("not 8589", "rather than 8589"); the others the nearest number ("8589 is stale").
_FORWARD = re.compile(r"\b(?:not|no longer|never|neither|nor|instead of|rather than|isn't|aren't|wasn't|doesn't|"
                      r"don't|didn't|overrides?|overriding|supersedes?|replaces?|takes? precedence over|ignore|"
                      r"ignoring|except|excluding|discard(?:ing)?)\b", re.IGNORECASE)
_NEAR = re.compile(r"\b(?:backups?|bak|stale|old|older|outdated|obsolete|previous(?:ly)?|former|legacy|deprecated|"
                   r"superseded|overridden|replaced|unused|default|defaults|fallback|wrong|incorrect|leftover|"
                   r"pre-migration|before the (?:v\d+ )?migration|not in use|not used|no longer used|ignored|"
                   r"irrelevant|placeholder|example|sample|red herrings?|decoys?|distractors?|pre-\w+|shadowed|"
                   r"inactive|unrelated)\b", re.IGNORECASE)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|possibly|probably|(?:might|may|could) (?:also )?be|either|or|alternatively|"
                    r"unsure|not sure)\b", re.IGNORECASE)
_ANAPHOR = re.compile(r"^(?:(?:but|and|though|however)\s+)?(?:it|that|this|which|these|those|both|neither|none|"
                      r"each|the latter|the former)\b", re.IGNORECASE)
#: Words that assert the number right after (or before) them whatever else the clause says of it:
#: "but the real port is 8157 since the backup is what's deployed" gives 8157 as the answer.
_ASSERT_BEFORE = re.compile(r"(?:\b(?:real|actual|true|correct|right|live|effective)\s+(?:tcp\s+)?(?:port|value|answer|"
                            r"one|setting)\s*(?:is|=|:|would be|will be)|\b(?:actually|really|in fact)\s+(?:is|=|uses|"
                            r"listens on)(?:\s+port)?)\s*$", re.IGNORECASE)
_ASSERT_AFTER = re.compile(r"^\s*(?:is|being)\s+(?:the\s+)?(?:real|actual|true|correct|right|live|effective)\b",
                           re.IGNORECASE)
_INT = re.compile(r"(?<![\d.])\d+(?![\d])(?!\.\d)")
#: Words that give the number right after them as the answer: "Final answer: 4447", "it returns 4447".
_RESULT = re.compile(r"\b(?:final answer|answer|result|returns|return value|the value)\s*(?:is|=|:|->|\u2192|would be|"
                     r"will be|of)?\s*(?:port\s+)?$", re.IGNORECASE)
_OPERAND = re.compile(r"^\s*(?:x\b|[\u00d7*+/\u2212]|-\s*\w|times\b|plus\b|minus\b)", re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(?:would|could|if|unless|without|had|were|instead)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Mention:
    """One mention of a number: asserted, set aside, or hedged towards."""

    value: int
    clause: str
    rejected: bool
    hedged: bool
    #: given as the result ("Final answer: 4447", "returns 4447"), not as an operand ("returns 1399 x 3")
    #: and not in a conditional clause ("would return 2798")
    stated: bool = False


#: Negations that say something of the number before them ("8589 is not in use"); the others
#: ("rather than", "overrides", "and not") only set aside what follows them.
_PREDICATE = re.compile(r"^(?:not|no longer|never|neither|isn't|aren't|wasn't|doesn't|don't|didn't)$", re.IGNORECASE)
_COORDINATED = re.compile(r"\b(?:and|or|but)\s*$", re.IGNORECASE)


def sets_aside(text: str) -> bool:
    """Whether ``text`` holds a word that sets a number aside: a negation ("not", "rather than") or a
    description ("backup", "old", "default")."""
    return bool(_FORWARD.search(text) or _NEAR.search(text))


def _cue_targets(clause: str, spots: list[tuple[int, int]], describing_words: bool = True) -> set[int]:
    """Indexes of the number mentions of ``clause`` that a setting-aside cue points at."""
    hit: set[int] = set()
    if not spots:
        return hit
    objects: list[tuple[int, int]] = []  # spans a negation sets aside that hold no number: "not the backup's"
    for m in _FORWARD.finditer(clause):
        # "not 8589" sets aside the number after the cue, not one past a colon ("isn't flat: it returns 4197");
        # with none after it, "8589 is not in use" sets aside the one before, "9763 and not the backup's" not
        after = [i for i, (s, _) in enumerate(spots) if s >= m.end() and ":" not in clause[m.end():s]]
        before = [i for i, (_, e) in enumerate(spots) if e <= m.start()]
        if after:
            hit.add(after[0])
            continue
        objects.append((m.end(), len(clause)))
        if before and _PREDICATE.match(m.group()) and not _COORDINATED.search(clause[:m.start()]):
            hit.add(before[-1])
    for m in _NEAR.finditer(clause) if describing_words else ():
        if any(s <= m.start() < e for s, e in objects) and not _NEAR_NEGATED.match(m.group()):
            continue  # "9763 rather than the backup's port": the description is of what is set aside
        distance = [min(abs(m.start() - e), abs(s - m.end())) for s, e in spots]
        hit.add(distance.index(min(distance)))
    return hit


_NEAR_NEGATED = re.compile(r"^(?:not|no)\b", re.IGNORECASE)
#: "which is not the old port": a description denied, which sets nothing aside.
_DENIED_DESCRIPTION = re.compile(r"\b(?:not|never|isn't|wasn't|aren't)\s+(?:(?:the|a|an|from|in|one|of|that)\s+)+"
                                 r"(?:\w+\s+)?(?:backups?|bak|stale|old|older|outdated|obsolete|previous|former|legacy|"
                                 r"deprecated|default|defaults|fallback|wrong|incorrect)\b", re.IGNORECASE)


_JOINED = re.compile(r"^\s*(?:and|or|nor|&|/)\s*$", re.IGNORECASE)
_LIST_OPENS = re.compile(r"^\s*(?:(?:both|the|ports?|values?|numbers?|figures?)\s+)*$", re.IGNORECASE)


def _listed(clause: str, spots: list[tuple[int, int]], targets: set[int]) -> set[int]:
    """Extend ``targets`` over lists: "not 8589 or 9448", "both 8589 and 9448 are stale".

    Returns the mentions set aside as members of such a list: their "or" is no hedge.
    """
    listed: set[int] = set()
    for k in range(1, len(spots)):  # a negation reaches the whole list after it
        if k - 1 in targets and k not in targets and _JOINED.match(clause[spots[k - 1][1]:spots[k][0]]) \
                and _FORWARD.search(clause[:spots[0][0]] + clause[spots[0][1]:spots[k - 1][0]]):
            targets.add(k)
            listed.add(k)
    for k in range(len(spots) - 2, -1, -1):  # a description after a list that opens the clause
        if k + 1 in targets and k not in targets and _JOINED.match(clause[spots[k][1]:spots[k + 1][0]]) \
                and _LIST_OPENS.match(clause[:spots[0][0]]):
            targets.add(k)
            listed.add(k + 1)
    return listed


def mentions(text: str, keep: set[int] | None = None, *, describing_words: bool = True) -> list[Mention]:
    """Every integer mentioned in an answer (only those in ``keep``, when given), with its stance.

    With ``describing_words`` false only negations set a number aside ("not 990"), not words
    such as "old" or "default" that may describe the right figure too.
    """
    out: list[Mention] = []
    for clauses in sentences(plain(text)):
        for i, clause in enumerate(clauses):
            spots = [(m.start(), m.end()) for m in _INT.finditer(clause)
                     if keep is None or int(m.group()) in keep]
            if not spots:
                continue
            targets = _cue_targets(clause, spots, describing_words)
            nxt = clauses[i + 1] if i + 1 < len(clauses) else ""
            # "8589, but it is a backup": a following clause that only points back sets the last number aside;
            # read by negations only, it must point at the number itself: in "returns 4197 from the banded fee,
            # which does not use the flat table" the "which" is the fee
            closes = describing_words or not re.sub(r"[\s\W]+", "", clause[spots[-1][1]:])
            if nxt and closes and _ANAPHOR.match(nxt) and not _INT.search(nxt) and not _DENIED_DESCRIPTION.search(nxt) \
                    and (_FORWARD.search(nxt) or (describing_words and _NEAR.search(nxt))):
                targets.add(len(spots) - 1)
            listed = _listed(clause, spots, targets)
            for k, (s, e) in enumerate(spots):
                before = clause[spots[k - 1][1] if k else 0:s]
                after = clause[e:spots[k + 1][0] if k + 1 < len(spots) else len(clause)]
                if _ASSERT_BEFORE.search(before) or _ASSERT_AFTER.match(after):
                    targets.discard(k)
                stated = bool(_RESULT.search(before)) and not _OPERAND.match(after) and not _CONDITIONAL.search(clause)
                hedged = bool(_HEDGE.search(before)) and k not in listed
                out.append(Mention(int(clause[s:e]), clause, k in targets, hedged, stated))
    return out


def alternatives(text: str, answer: int, low: int, high: int | None = None) -> list[int]:
    """Numbers from ``low`` to ``high`` other than ``answer`` that ``text`` offers as the answer too.

    A number the answer hedges towards ("4197, or possibly 4297") or states as the result
    ("... Final answer: 4447") is a second candidate, unless the answer sets it aside.
    """
    return sorted({m.value for m in mentions(text) if m.value != answer and low <= m.value <= (high or m.value)
                   and (m.hedged or (m.stated and not m.rejected))})


_PLACEHOLDER = 7_300_000_000
#: A claim about the thing named in the same clause: "X caused it", "X is the root cause", "X failed".
_CLAIM = re.compile(r"\b(?:caused|causes|cause|culprit|triggered|broke|failed|fails|failing|guilty|responsible)\b",
                    re.IGNORECASE)
_CLAIM_NEGATED = re.compile(r"(?:\b(?:not|no|never|neither|nor|rather than|instead of)|n't)(?:\s+\S+){0,3}\s*$",
                            re.IGNORECASE)


def _claims(part: str) -> bool:
    """Whether ``part`` (no colon between it and the id) claims, undenied, that something caused or failed."""
    return any(not _CLAIM_NEGATED.search(part[:m.start()]) for m in _CLAIM.finditer(part))


#: A clause that says how an id first looked ("at first X looked relevant", "X seemed suspicious") ...
_APPEARANCE = re.compile(r"\b(?:at first|initially|first glance|looked|looks|seemed|seems|appeared|appears|"
                         r"i (?:first )?(?:thought|suspected))\b", re.IGNORECASE)
#: ... and a "but" that describes it otherwise: "but it is a routine reload", "but it turned out harmless".
_TAKEN_BACK = re.compile(r"^(?:but|however|though|yet)\s+(?:it|that|this|which)(?:'s|\s+(?:is|was|turned out|"
                         r"proved|ran|only))\b", re.IGNORECASE)
_AFFIRMED = re.compile(r"\b(?:indeed|real|actual|true|right|correct|confirmed|the one|it after all|after all)\b",
                       re.IGNORECASE)


def id_stances(text: str, pattern: re.Pattern[str], known: set[str]) -> dict[str, bool]:
    """For each id of ``known`` that ``text`` mentions: True when it asserts it, False when it only sets it aside.

    ``pattern`` finds an id as written (its group 1, lower-cased, is the id). Only negations set
    an id aside ("it's not b96a8aad", "b96a8aad is not the cause", "rather than q-1a2b"); a
    clause that also claims it ("b96a8aad didn't log an error, but it caused the outage") asserts it.
    """
    index: dict[str, int] = {}

    def masked(m: re.Match[str]) -> str:
        key = m.group(1).lower()
        if key not in known:
            return m.group(0)
        return f" {_PLACEHOLDER + index.setdefault(key, len(index))} "

    text = pattern.sub(masked, final_claim(text))
    # "q-6b2c: table line_item does not exist": after a colon the answer describes the id, whose subject
    # is something else ("b96a8aad: not it" stays one clause)
    text = plain(re.sub(r"(?<=\d) *:(?!\s*(?:not|no|never|isn't|wasn't)\b)\s*", ". ", text))
    keys = {_PLACEHOLDER + n: key for key, n in index.items()}
    after = {c: following(cs, i).split(":")[0] for cs in sentences(text) for i, c in enumerate(cs)}
    out: dict[str, bool] = {}
    for m in mentions(text, set(keys), describing_words=False):
        at = m.clause.index(str(m.value))
        near = [p for p in m.clause.split(":") if str(m.value) in p] or [m.clause]
        claimed = _claims(near[0]) or (":" not in m.clause[at:] and _claims(after.get(m.clause, "")))
        # "At first b96a8aad looked relevant, but it is a routine reload": an appearance taken back
        retracted = bool(_APPEARANCE.search(m.clause) and _TAKEN_BACK.match(after.get(m.clause, ""))
                         and not _AFFIRMED.search(after.get(m.clause, "")))
        out[keys[m.value]] = out.get(keys[m.value], False) or (not m.rejected and not retracted) or claimed
    return out


def following(clauses: list[str], index: int) -> str:
    """The clause after ``index`` when it only points back at it ("which is ...", "that is ..."), else ''."""
    nxt = clauses[index + 1] if index + 1 < len(clauses) else ""
    return nxt if nxt and _ANAPHOR.match(nxt) else ""


__all__ = ["Mention", "alternatives", "final_claim", "following", "id_stances", "markup_removed", "mentions",
           "outside_code", "plain", "sentences", "sets_aside"]
