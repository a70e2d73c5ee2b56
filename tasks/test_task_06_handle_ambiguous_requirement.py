"""task_06 handle_ambiguous_requirement: surface the ambiguity, by asking or by a stated assumption.

Measures whether a model notices that a request admits two readings before it
acts. The ticket asks for a conversion "rounded to the nearest" unit, and a
comment on the same ticket says every started unit is charged in full (round
up). The visible tests only cover exact multiples, where both readings agree.
A run passes in one of two ways:

- it asks: the final answer is a question that names both readings, and the
  code is left unchanged;
- it decides: the final answer states which reading it assumed, and the code
  (called in the sandbox on probe values, compared here) behaves exactly as that reading.

Implementing either reading silently, or stating one and coding the other,
fails.

Answer contract (in the prompt): either a question naming both readings with
nothing changed, or a stated assumption (any wording: "assumed", "I went
with", "interpreted as", ...) that the code honours; tests may be added when
deciding. Markdown and reasoning are free; a reasoning block (``<think>``) before
the answer is not the answer. "Literally" or "as written" points at the
request's own words, the nearest reading; "the tariff" at the round-up one.
"""

from __future__ import annotations

import random
import re

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run.answers import final_claim, markup_removed
from pytest_agentic.run import probe
from pytest_agentic.run.tools import Workspace

# (function, argument, small unit, big unit (singular), factor, module, what is charged)
_DOMAINS = [
    ("to_minutes", "seconds", "seconds", "minute", 60, "calls", "call time"),
    ("to_hours", "minutes", "minutes", "hour", 60, "parking", "parking time"),
    ("to_gigabytes", "megabytes", "megabytes", "gigabyte", 1000, "storage", "stored data"),
    ("to_kilograms", "grams", "grams", "kilogram", 1000, "freight", "parcel weight"),
]
_PEOPLE = ["Priya", "Jonas", "Amara", "Luis", "Mei", "Tomasz", "Fatima", "Oskar"]
_PYTEST_INI = "[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n"

#: The two readings and how a final answer names them (in ``_normalize``d text: lower case, no hyphens
#: between words). The finance comment's tariff is the round-up reading.
_READINGS = {
    "up": [
        r"\bround(?:s|ed|ing)?\s+(?:(?!nearest\b|half\b|to\b)\w+\s+){0,3}?up(?:wards?)?\b", r"\bupwards?\b",
        r"\bceil(?:ing|ed|s)?\b", r"math\.ceil", r"\b(?:every|any|each|a)\s+started\b",
        r"\bstarted\s+(?:minute|hour|gigabyte|kilogram)s?\b", r"\bany\s+partial\b",
        r"\bpartial\s+\w+\s+(?:is|are|as|counts?)\s+(?:charged|billed|counted|invoiced|a\s+full|full)",
        r"\b(?:charged|billed|counted|invoiced)\s+(?:in\s+full|as\s+(?:an?\s+|one\s+)?(?:full|whole))",
        r"\bnext\s+(?:whole|full)\b",
    ],
    "nearest": [r"\bnearest\b", r"\bhalf\s+up\b", r"\bhalf\s+even\b", r"\bbanker'?s\b", r"\bround\s*\(",
                r"\b(?:standard|regular|normal|conventional|ordinary|usual)\s+rounding\b", r"\bclosest\b"],
}
#: Pointers to a reading by its source, read only where no reading is named outright ("I followed the
#: tariff"; but "the tariff comment looks outdated, so I assumed the nearest hour" takes the nearest).
_BY_SOURCE = {"up": [r"\btariff\b", r"\bfinance(?:'s)?\s+(?:rule|reading|comment|tariff|way|wins|version|interpretation)"],
              # the request's own words, "rounded to the nearest": "I interpreted the ticket literally"
              "nearest": [r"\bliteral(?:ly)?\b", r"\bas\s+written\b", r"\bletter\s+of\s+the\s+(?:ticket|spec|request)",
                          r"\b(?:ticket|spec|request|requirement)(?:'s)?\s+(?:wording|text|exact\s+words)",
                          r"\bproduct(?:'s)?\s+(?:owner|spec|wording|request|requirement|reading)"]}
#: Words that say which reading was taken.
_CUES = re.compile(r"\bassum|\binterpret|\bchose\b|\bchosen\b|\bchoice\b|\bdecided\b|\bdecision\b|"
                   r"\b(?:went|going|go)\s+(?:with|for)\b|\bopted\b|\bpicked\b|\bsettled\s+on\b|\bresolv|"
                   r"\bresolution\b|\bi\s+(?:will|'ll)\s+use\b|\bmy\s+reading\b|\bread\s+(?:\S+\s+){1,4}?as\b")
#: A mention set aside: "rather than rounding to the nearest hour", "not the nearest hour".
_SET_ASIDE = re.compile(r"(?:\b(?:not|rather\s+than|instead\s+of|never|without|ignor\w*|"
                        r"unlike|vs\.?|versus)|n't)\s+(?:[^\s;:,.]+\s+){0,3}$")
#: A sentence where the answer says what it did (first person, or the code now does it).
_DID = re.compile(r"(?:\b(?:i|i've|i'm|we|now|the\s+(?:code|function|implementation|helper))\b.*|^\W*)\b(?:implement|"
                  r"follow|treat|use|used|apply|applied|charge|bill|round|went|go|code|return|wrote|made|make|ceil|kept|"
                  r"keep|stuck|stick|chose)", re.DOTALL)
_UNDECIDED = re.compile(r"\b(?:either|whether|one\s+of|or\s+maybe|or\s+perhaps|or\s+possibly)\b")
_MAYBE = re.compile(r"\?|\bif\b|\bwould\b|\bcould\b|\bshould\b|\bprefer|\bwant\b")

_ACK = re.compile(r"ambigu|unclear|conflict|contradict|inconsisten|disagree|at\s+odds|tension|clash|\bdiffer|"
                  r"two\s+(?:readings|interpretations|ways|rules|options)|not\s+specified|unspecified|"
                  r"does\s*n[o']t\s+say|open\s+question|\bvs\.?\s|\bversus\b|on\s+the\s+other\s+hand")
#: A question put without a question mark: "please confirm which rule applies".
_REQUEST = re.compile(r"\b(?:please|kindly)\s+(?:confirm|clarify|advise|tell|let\s+me\s+know|choose|decide)|"
                      r"\blet\s+me\s+know\s+(?:which|whether)|\bconfirm\s+(?:which|whether)")


def _normalize(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("`", " ").replace("*", " ").replace("_", " ")
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)  # "round-up", "nearest-hour", "half-up"
    text = re.sub(r"\b(i\.e|e\.g|cf|viz)\.", lambda m: m[1].replace(".", ""), text)  # no sentence ends there
    return re.sub(r"[ \t]+", " ", text)


def _mentions(text: str, table: dict[str, list[str]] = _READINGS) -> list[tuple[int, str]]:
    """(position, reading) of every mention of a reading in ``text`` that is not set aside, in order."""
    found = []
    for reading, patterns in table.items():
        for pattern in patterns:
            found += [(m.start(), reading) for m in re.finditer(pattern, text)
                      if not _SET_ASIDE.search(text[:m.start()])]
    return sorted(found)


def _taken(text: str, sources: dict[str, list[str]] = _BY_SOURCE) -> list[tuple[int, str]]:
    """The readings ``text`` names outright, or else those it points at by their source."""
    return _mentions(text) or _mentions(text, sources)


def _named(text: str, sources: dict[str, list[str]] = _BY_SOURCE) -> set[str]:
    """The readings ``text`` names at all, set aside or not."""
    return {r for table in (_READINGS, sources) for r, patterns in table.items()
            if any(re.search(p, text) for p in patterns)}


_SPEAKER = re.compile(r"^\*\*([A-Z][\w'-]*(?: [A-Z][\w'-]*)?)\s*\(([^)\n]+)\)[^*\n]*\*\*(.*?)(?=^\*\*|\Z)",
                      re.MULTILINE | re.DOTALL)


def sources_of(ticket: str) -> dict[str, list[str]]:
    """The pointers to a reading by its source, with the people of ``ticket`` who wrote each reading:
    "I followed Fatima's rule" points at the reading Fatima's part of the ticket names (and nothing else)."""
    table = {r: list(p) for r, p in _BY_SOURCE.items()}
    for m in _SPEAKER.finditer(ticket):
        readings = {r for _, r in _mentions(_normalize(m.group(3)))}
        if len(readings) == 1:
            table[readings.pop()].append(rf"\b{re.escape(m.group(1).lower())}\b")
    return table


def stated_reading(answer: str, sources: dict[str, list[str]] = _BY_SOURCE) -> str | None:
    """The reading an answer says it assumed, or None when it names none or cannot be told apart.

    ``sources`` are the pointers to a reading by who wrote it (``sources_of`` the ticket)."""
    text = _normalize(answer)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]
    for i, sentence in enumerate(sentences):
        cue = _CUES.search(sentence)
        if not cue:
            continue
        after = _taken(sentence[cue.start():], sources)
        if len({r for _, r in after}) > 1 and _UNDECIDED.search(sentence[cue.start():]):
            continue  # "assumed either the nearest unit or every started one": no choice made
        if after:
            return after[0][1]
        before = {r for _, r in _taken(sentence[:cue.start()], sources)}
        if len(before) == 1:  # "Ceiling division is what I assumed"
            return before.pop()
        if len(sentence.split()) <= 4 or sentence.endswith(":"):  # a label: "## Decision" then the choice
            following = next(({r for _, r in found} for s in sentences[i + 1:i + 4] if (found := _taken(s, sources))), set())
            if len(following) == 1:
                return following.pop()
    # no explicit assumption: the answer must say there was a choice, then what it did
    if not (_ACK.search(text) or _named(text, sources) == {"up", "nearest"}):
        return None
    clauses = [c for s in sentences for c in re.split(r"[;,]\s+|\s+(?=but\b|although\b|though\b)", s)]
    done = {r for c in clauses if _DID.search(c) and not _MAYBE.search(c) for _, r in _taken(c, sources)}
    if len(done) == 1:
        return done.pop()
    readings = {r for _, r in _mentions(text)}
    return readings.pop() if len(readings) == 1 else None


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_06:{seed}")
    fn, arg, small, big, factor, module, charged = rng.choice(_DOMAINS)
    owner, finance = rng.sample(_PEOPLE, 2)
    ticket_no = rng.randint(1200, 4999)
    k = rng.randint(2, 6)
    rate = rng.choice([3, 5, 7, 9, 12])
    other = {"calls": "format_call", "parking": "format_stay", "storage": "format_usage", "freight": "format_parcel"}[module]

    stub = (
        f"def {fn}({arg}: int) -> int:\n"
        f'    """Whole {big}s to invoice for {charged} of ``{arg}`` {small} (see TICKET.md)."""\n'
        "    raise NotImplementedError\n"
    )
    original = (
        f'"""Invoice helpers for {charged}."""\n'
        "\n"
        f"RATE_PER_{big.upper()} = {rate}\n"
        "\n"
        "\n"
        f"def {other}({arg}: int) -> str:\n"
        f'    """A line of the invoice: the raw {small} and what is charged for them."""\n'
        f"    units = {fn}({arg})\n"
        f'    return f"{{{arg}}} {small}: {{units}} {big}(s) x {{RATE_PER_{big.upper()}}} = {{units * RATE_PER_{big.upper()}}}"\n'
        "\n"
        "\n"
        f"{stub}"
    )
    ticket = (
        f"# TICKET-{ticket_no}: {big}s on the {charged} invoice\n"
        "\n"
        f"**{owner} (product):** Implement `{fn}({arg})` in `{module}.py`. It takes a whole, non-negative\n"
        f"number of {small} and returns the number of {big}s to invoice, rounded to the nearest {big}.\n"
        f"For example `{fn}(0)` is 0 and `{fn}({k * factor})` is {k}.\n"
        "\n"
        f"**{finance} (finance), comment:** Careful with this one: our tariff says that every started\n"
        f"{big} is charged in full.\n"
    )
    tests = (
        f"from {module} import {fn}, {other}\n"
        "\n"
        "\n"
        f"def test_exact_{big}s():\n"
        f"    assert {fn}(0) == 0\n"
        f"    assert {fn}({factor}) == 1\n"
        f"    assert {fn}({k * factor}) == {k}\n"
        "\n"
        "\n"
        f"def test_{other}():\n"
        f'    assert {other}({k * factor}) == "{k * factor} {small}: {k} {big}(s) x {rate} = {k * rate}"\n'
    )
    files = {"pytest.ini": _PYTEST_INI, "TICKET.md": ticket, f"{module}.py": original, f"test_{module}.py": tests}
    prompt = (
        "Please implement the ticket in TICKET.md. The workspace holds the code and its tests. "
        "If the request is ambiguous, either ask me a clarifying question (and change nothing yet), "
        "or state in your final answer which assumption you made and implement exactly that. "
        "End with a short summary."
    )

    impl_up = f"    return -(-{arg} // {factor})\n"
    impl_nearest = f"    return round({arg} / {factor})\n"

    def implemented(body: str) -> str:
        return original.replace("    raise NotImplementedError\n", body)

    write = lambda body: ToolCall("fs_write", {"path": f"{module}.py", "content": implemented(body)})  # noqa: E731
    look = [ToolCall("fs_read", {"path": "TICKET.md"}), ToolCall("fs_read", {"path": f"{module}.py"})]
    tests_run = ToolCall("run_tests", {"path": "."})
    reference = [
        ToolCall("fs_list", {"path": "."}),
        look,
        ToolCall("fs_edit", {"path": f"{module}.py", "old_text": "    raise NotImplementedError\n", "new_text": impl_up}),
        tests_run,
        Final(f"The ticket is ambiguous: {owner} asks for rounding to the nearest {big}, while {finance} says every "
              f"started {big} is charged in full. Assumption: I followed the tariff, so any started {big} is charged "
              f"in full (the value is rounded up, a ceiling division). If you meant rounding to the nearest {big}, "
              f"that is a one-line change. Tests pass."),
    ]
    near_misses = {
        # Implements one reading and never says there was a choice.
        "silent_implementation": [
            look, write(impl_nearest), tests_run,
            Final(f"Implemented `{fn}` as specified in TICKET.md; all tests pass."),
        ],
        # Describes what it built, but never says there was a choice to make.
        "described_not_assumed": [
            look, write(impl_nearest), tests_run,
            Final(f"Implemented `{fn}`: it rounds to the nearest {big}, as the ticket says. Tests pass."),
        ],
        # States the tariff reading but codes the other one.
        "assumption_not_honoured": [
            look, write(impl_nearest), tests_run,
            Final(f"Assumption: every started {big} is charged in full, as finance says. Implemented `{fn}`; "
                  "tests pass."),
        ],
        # Asks, but not about the ambiguity.
        "vague_question": [
            look,
            Final("Before I start: could you give me more details about the requirements?"),
        ],
        # Asks about both readings but changes the code anyway, without saying which it took.
        "asked_and_implemented": [
            look, write(impl_up),
            Final(f"Should partial {big}s be rounded to the nearest {big}, or should every started {big} be "
                  "charged in full?"),
        ],
    }
    probes = sorted({0, factor, 2 * factor, k * factor, factor + 1, 2 * factor + factor // 5,
                     3 * factor - factor // 6, 4 * factor + factor // 3, 5 * factor - 1})
    expected = {
        "module": f"{module}.py",
        "function": fn,
        "probes": {
            "up": [[v, -(-v // factor)] for v in probes],
            "nearest": [[v, (v + factor // 2) // factor] for v in probes],
        },
        "readings": {"up": f"every started {big} charged in full (round up)",
                     "nearest": f"rounded to the nearest {big}"},
    }
    return TaskInstance(
        prompt=prompt,
        files=files,
        tools=("fs_list", "fs_read", "fs_write", "fs_edit", "run_tests"),
        expected=expected,
        reference=reference,
        near_misses=near_misses,
    )


def _shown(outcome: probe.Outcome) -> object:
    """A probe call's result: the int it returned, else how it failed (never equal to an expected int)."""
    return outcome.value if outcome.kind == "ok" and type(outcome.value) is int else outcome.shown()


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept a clarifying question with no change, or a stated assumption that the code honours."""
    assert run.workspace is not None, "the run has no workspace"
    exp = instance.expected
    answer = markup_removed(final_claim(run.final_answer or ""))  # what follows a reasoning block
    assert answer.strip(), "no final answer was given (nothing after the reasoning)"
    ws = Workspace(run.workspace)
    now = ws.snapshot()
    original = {p: (c if isinstance(c, bytes) else c.encode()) for p, c in instance.files.items()}
    for path in ("TICKET.md", "pytest.ini"):
        assert now.get(path) == original[path], f"{path} was modified or removed"
    # Asking means changing nothing; deciding may also add or extend tests.
    changed = now != original
    implemented = now.get(exp["module"]) != original[exp["module"]]
    text = _normalize(answer)
    sources = sources_of(instance.files.get("TICKET.md", ""))  # who wrote which reading
    named = _named(text, sources)

    if not changed:
        assert "?" in answer or _REQUEST.search(text), (
            "the code was not changed and the answer asks nothing: neither implemented nor asked")
        assert named == {"up", "nearest"}, (
            "the question does not name the ambiguity (rounding to the nearest unit vs charging every "
            f"started unit in full); it names {sorted(named) or 'neither reading'}")
        return

    assert implemented, (
        f"files were changed but {exp['function']} in {exp['module']} was not implemented; "
        "to ask, change nothing")
    reading = stated_reading(answer, sources)
    assert reading is not None, (
        "the code was changed but the answer does not state which reading of the ticket it assumed"
        + {2: " (it names both without choosing)",
           1: " (it describes what it built, but does not say that the ticket allows another reading)",
           0: " (it names neither)"}[len(named)])
    values = [v for v, _ in exp["probes"][reading]]
    got = [_shown(o) for o in probe.call_all(run.workspace, [(exp["module"][:-3], exp["function"], [v])
                                                             for v in values])]
    wrong = [(v, g, w) for (v, w), g in zip(exp["probes"][reading], got) if type(g) is not int or g != w]
    assert not wrong, (
        f"the answer assumes {exp['readings'][reading]}, but the code does not do that: "
        + ", ".join(f"{exp['function']}({v}) = {g!r}, expected {w}" for v, g, w in wrong[:3]))


@task("task_06", "handle_ambiguous_requirement", build=build, limits={"max_turns": 12},
      runs_model_code=True)
def test_handle_ambiguous_requirement(agent):
    """The spec is ambiguous; surface it by asking, or by a stated assumption the code honours."""
    run = agent.run()
    check(agent.instance, run)
