"""What a final message answers with: the text after the model's reasoning, without its markup.

Since revision 3 the answer tasks judge labelled answer lines (``answerlines.py``), not the
claim of free prose; what stays here is what that reader and the failure classifier need:
the part of a final message that follows a reasoning block (``<think>...</think>``, a
harmony ``final`` channel), and text with its HTML and LaTeX wrappers removed.
"""

from __future__ import annotations

import re

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


__all__ = ["final_claim", "markup_removed"]
