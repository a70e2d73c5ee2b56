"""task_06 handle_ambiguous_requirement: surface the ambiguity, by asking or by a stated assumption.

Measures whether a model notices that a request admits two readings before it
acts. The ticket asks for a conversion "rounded to the nearest" unit, and a
comment on the same ticket says every started unit is charged in full (round
up). The visible tests only cover exact multiples, where both readings agree.
A run passes in one of two ways:

- it asks: its question line names both readings, and the code is left
  unchanged;
- it decides: its assumption line states which reading it assumed, and the
  code (called in the sandbox on probe values, compared here) behaves exactly
  as that reading.

Implementing either reading silently, or stating one and coding the other,
fails.

Answer contract (revision 3, in the prompt, which names neither reading): the reply ends
with a labelled line, ``QUESTION: <the question>`` when it asks or ``ASSUMPTION: <the
assumption implemented>`` when it decides, and only that line is judged
(``pytest_agentic.run.answerlines``); the rest of the reply, reasoning blocks included, is free.

- Asking: the code is unchanged and the ``QUESTION:`` line names both readings (in any words
  the ``_READINGS`` and source tables know: "nearest", "round up", "every started hour",
  "the tariff", "Priya's rule", ...).
- Deciding: the module was changed (tests may be added) and the ``ASSUMPTION:`` line's reading
  is decided by the smallest rule: the readings the line names, not set aside ("rather than
  the nearest", "not nearest"); if it names one, that one; if both, the one named after its
  last word of choice ("I went with the tariff: round up"); else none. How exact halves are
  broken ("nearest, with half-hours rounded up") is part of the nearest reading. The code, run
  in a sandbox on probe values, must behave exactly as that reading; when the line says how exact
  halves are broken (half up, half even / banker's, half down), on exact halves too.
- No line for what was done (an unchanged workspace without ``QUESTION:``, a changed one
  without ``ASSUMPTION:``) fails as ``answer_format``; a line that names no reading, or a
  question put while the code was changed, fails as a wrong answer.
"""

from __future__ import annotations

import random
import re

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run import answerlines, probe
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
                   r"\bresolution\b|\bi\s+(?:will|'ll)\s+use\b|\bmy\s+reading\b|\bread\s+(?:\S+\s+){1,4}?as\b|"
                   r"\bimplement\w*|\bfollow(?:s|ed|ing)?\b|\bappl(?:y|ies|ied)\b")
#: A mention set aside: "rather than rounding to the nearest hour", "not the nearest hour".
_SET_ASIDE = re.compile(r"(?:\b(?:not|rather\s+than|instead\s+of|never|without|ignor\w*|"
                        r"unlike|vs\.?|versus)|n't)\s+(?:[^\s;:,.]+\s+){0,6}$")


#: How exact halves are broken, a detail of rounding to the nearest unit: "with half-gigabytes (x500 MB)
#: rounded up", "ties round up", "halves rounded up" read as "half up", not as the round-up reading.
#: Halves in the plural (or ties, midpoints) only: "even half a gigabyte is rounded up" is round-up talk.
_TIE_BREAK = re.compile(r"\b(?:halves|ties?|midpoints?|halfway|half\s+way|half\s+[a-z]+s|exact(?:ly)?\s+half)\b"
                        r"[^.;:!?]{0,40}?\bround(?:s|ed|ing)?\s+up(?:wards?)?\b")


#: How a nearest-unit assumption says exact halves are broken; probed on exact halves when it says one.
_TIES = {"half_up": [r"\bhalf\s+up\b"], "half_even": [r"\bhalf\s+(?:to\s+)?even\b", r"\bbanker'?s\b"],
         "half_down": [r"\bhalf\s+down\b"]}


def _normalize(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("`", " ").replace("*", " ").replace("_", " ")
    text = re.sub("[\"\u201c\u201d]", " ", text)  # not finance's "every started hour": a quote sets nothing apart
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)  # "round-up", "nearest-hour", "half-up"
    text = re.sub(r"\b(i\.e|e\.g|cf|viz)\.", lambda m: m[1].replace(".", ""), text)  # no sentence ends there
    text = _TIE_BREAK.sub("half up", text)
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


def assumed_reading(line: str, sources: dict[str, list[str]] = _BY_SOURCE) -> str | None:
    """The reading an ``ASSUMPTION:`` line states, or None when it names none or cannot be told apart.

    The readings the line names and does not set aside: one, that one; both, the one named after
    the line's last word of choice ("the ticket conflicts (nearest vs every started GB); I went with
    the tariff"). ``sources`` are the pointers to a reading by who wrote it (``sources_of`` the ticket)."""
    text = _normalize(line)
    named = {r for _, r in _taken(text, sources)}
    if len(named) < 2:
        return named.pop() if named else None
    for cue in reversed(list(_CUES.finditer(text))):
        after = {r for _, r in _taken(text[cue.start():], sources)}
        if after:
            return after.pop() if len(after) == 1 else None
    return None


def stated_tie_break(line: str) -> str | None:
    """How an ``ASSUMPTION:`` line of the nearest reading breaks exact halves, when it names one way
    (not set aside): ``half_up``, ``half_even`` or ``half_down``; else None (halves are not probed)."""
    ways = {way for _, way in _mentions(_normalize(line), _TIES)}
    return ways.pop() if len(ways) == 1 else None


def _at_half(value: int, factor: int, way: str) -> int:
    q, r = divmod(value, factor)
    assert 2 * r == factor, value
    return q + {"half_up": 1, "half_down": 0, "half_even": q % 2}[way]


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
        "End with a short summary, and put the question or the assumption on the last line of your reply, "
        "labelled `QUESTION:` or `ASSUMPTION:`."
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
              f"that is a one-line change. Tests pass.\n\nASSUMPTION: every started {big} is charged in full "
              f"(rounded up), as the tariff says."),
    ]
    near_misses = {
        # Implements one reading and never says there was a choice.
        "silent_implementation": [
            look, write(impl_nearest), tests_run,
            Final(f"Implemented `{fn}` as specified in TICKET.md; all tests pass.\n\nASSUMPTION: none needed."),
        ],
        # Describes what it built in the summary, but gives no assumption line.
        "described_not_assumed": [
            look, write(impl_nearest), tests_run,
            Final(f"Implemented `{fn}`: it rounds to the nearest {big}, as the ticket says. Tests pass."),
        ],
        # Names both readings on its assumption line without choosing.
        "assumed_both": [
            look, write(impl_nearest), tests_run,
            Final(f"Done.\n\nASSUMPTION: either the nearest {big} or every started {big} charged in full."),
        ],
        # States the tariff reading but codes the other one.
        "assumption_not_honoured": [
            look, write(impl_nearest), tests_run,
            Final(f"Implemented `{fn}`; tests pass.\n\nASSUMPTION: every started {big} is charged in full, as "
                  "finance says."),
        ],
        # Asks, but not about the ambiguity.
        "vague_question": [
            look,
            Final("Before I start I need more details.\n\nQUESTION: could you give me more details about the "
                  "requirements?"),
        ],
        # Asks about both readings but changes the code anyway, without saying which it took.
        "asked_and_implemented": [
            look, write(impl_up),
            Final(f"QUESTION: should partial {big}s be rounded to the nearest {big}, or should every started "
                  f"{big} be charged in full?"),
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
        # Exact halves, probed only when a nearest-unit assumption says how it breaks them.
        "halves": [factor // 2, 3 * factor // 2, 5 * factor // 2],
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


def _line(reply: str, label: str) -> str | None:
    """The text of the reply's ``label`` lines (joined), or None when it has none."""
    lines = answerlines.find(reply, label)
    return " ".join(line.text for line in lines) if lines else None


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept a clarifying question with no change, or a stated assumption that the code honours."""
    assert run.workspace is not None, "the run has no workspace"
    exp = instance.expected
    reply = run.final_answer or ""
    ws = Workspace(run.workspace)
    now = ws.snapshot()
    original = {p: (c if isinstance(c, bytes) else c.encode()) for p, c in instance.files.items()}
    for path in ("TICKET.md", "pytest.ini"):
        assert now.get(path) == original[path], f"{path} was modified or removed"
    # Asking means changing nothing; deciding may also add or extend tests.
    changed = now != original
    implemented = now.get(exp["module"]) != original[exp["module"]]
    sources = sources_of(instance.files.get("TICKET.md", ""))  # who wrote which reading
    question, assumption = _line(reply, "question"), _line(reply, "assumption")

    if not changed:
        if question is None:
            answerlines.unreadable("nothing was changed and the reply has no `QUESTION:` line")
        named = _named(_normalize(question), sources)
        assert named == {"up", "nearest"}, (
            "the QUESTION: line does not name the ambiguity (rounding to the nearest unit vs charging every "
            f"started unit in full); it names {sorted(named) or 'neither reading'}")
        return

    assert implemented, (
        f"files were changed but {exp['function']} in {exp['module']} was not implemented; "
        "to ask, change nothing")
    if assumption is None:
        assert question is None, "the QUESTION: line asks, but the code was changed: to ask, change nothing"
        answerlines.unreadable("the code was changed and the reply has no `ASSUMPTION:` line")
    reading = assumed_reading(assumption, sources)
    assert reading is not None, (
        "the ASSUMPTION: line does not say which reading of the ticket was implemented"
        + (" (it names both without choosing)" if len(_named(_normalize(assumption), sources)) == 2 else
           " (it names neither)"))
    cases = [tuple(case) for case in exp["probes"][reading]]
    tie = stated_tie_break(assumption) if reading == "nearest" else None
    if tie is not None:
        cases += [(v, _at_half(v, 2 * exp["halves"][0], tie)) for v in exp["halves"]]
    got = [_shown(o) for o in probe.call_all(run.workspace, [(exp["module"][:-3], exp["function"], [v])
                                                             for v, _ in cases])]
    wrong = [(v, g, w) for (v, w), g in zip(cases, got) if type(g) is not int or g != w]
    assert not wrong, (
        f"the answer assumes {exp['readings'][reading]}"
        + (f" ({tie.replace('_', ' ')} on exact halves)" if tie else "") + ", but the code does not do that: "
        + ", ".join(f"{exp['function']}({v}) = {g!r}, expected {w}" for v, g, w in wrong[:3]))


@task("task_06", "handle_ambiguous_requirement", build=build, limits={"max_turns": 12},
      runs_model_code=True)
def test_handle_ambiguous_requirement(agent):
    """The spec is ambiguous; surface it by asking, or by a stated assumption the code honours."""
    run = agent.run()
    check(agent.instance, run)
