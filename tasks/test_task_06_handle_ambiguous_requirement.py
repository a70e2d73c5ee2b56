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

Answer contract (revision 5, in the prompt, which names neither reading): the reply ends with
exactly one labelled line, ``QUESTION: <rule> or <rule>`` when it asks or ``ASSUMPTION: <rule>``
when it decides, each rule one word of a set the prompt defines for any rounding (:data:`RULES`:
``nearest``, ``up``, ``down``, ``half-up``, ``half-even``, ``half-down``), and only that line is
judged (``pytest_agentic.run.answerlines``, its form and hedge rules); the rest of the reply,
reasoning blocks included, is free. The line holds its value alone: a note on it (in brackets, after a
dash, alone in brackets under it, a footnote: ``up (or round-to-closest, per Oskar)``) or words beyond
its rules (``QUESTION: should I round up or to the nearest?``) fail as ``answer_format``, whatever they
say. A line's rules are the words of the set on it; ``nearest`` with one ``half-*`` word is that
``half-*`` rule.

- Asking: the code is unchanged and the ``QUESTION:`` line names the two readings: ``up`` and
  ``nearest`` (or a ``half-*`` rule), and no other rule.
- Deciding: the module was changed (tests may be added) and the ``ASSUMPTION:`` line names one
  rule, ``up`` or ``nearest`` (or a ``half-*`` rule); the code, run in a sandbox on probe values,
  must behave exactly as that rule (a ``half-*`` rule on exact halves too).
- A reply with both lines has not decided (the prompt says so): a hedge, and wrong. So is an
  ``ASSUMPTION:`` line with two rules. No line for what was done (an unchanged workspace without
  ``QUESTION:``, a changed one without ``ASSUMPTION:``), or a line with no rule word, fails as
  ``answer_format``; a question put while the code was changed, a question about other rules,
  or an assumed rule that is neither reading (``down``) fails as a wrong answer.
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

#: The rounding rules a judged line may name, one word each, as the prompt defines them.
RULES = ("nearest", "up", "down", "half-up", "half-even", "half-down")
_RULE = re.compile(r"(?<![\w-])(half[\s_-]?(?:up|even|down)|nearest|up|down)(?![\w-])", re.IGNORECASE)
#: The rules that read the ticket's own words: to the nearest unit, exact halves broken either way.
_NEAREST = {"nearest", "half-up", "half-even", "half-down"}


def rules(text: str) -> list[str]:
    """The rules a line names (its note included), distinct, in order: ``nearest`` with one ``half-*``
    rule is that rule ("nearest, half-up"); any other word is not read."""
    found = list(dict.fromkeys(re.sub(r"[\s_-]+", "-", m.group(1).lower()) for m in _RULE.finditer(text)))
    halves = [r for r in found if r.startswith("half-")]
    return [r for r in found if r != "nearest"] if len(halves) == 1 and "nearest" in found else found


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
        f"One {big} is {factor} {small}. For example `{fn}(0)` is 0 and `{fn}({k * factor})` is {k}.\n"
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
        "or decide, implement exactly that, and state your assumption. End with a short summary, and put "
        "exactly one of these lines last in your reply: `QUESTION: <rule> or <rule>`, naming the two rules you "
        "want me to choose between, or `ASSUMPTION: <rule>`, naming the one rule you implemented. Write each rule "
        "as one of these words: `nearest`, `up` (ceiling), `down` (floor), `half-up`, `half-even`, `half-down` "
        "(to the nearest, exact halves broken that way), and put no other of these words on that line. "
        f"A reply with both lines has not decided. {answerlines.ALONE}"
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
              f"that is a one-line change. Tests pass.\n\nASSUMPTION: up"),
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
            Final(f"Done.\n\nASSUMPTION: nearest or up"),
        ],
        # States the tariff reading but codes the other one.
        "assumption_not_honoured": [
            look, write(impl_nearest), tests_run,
            Final(f"Implemented `{fn}`; every started {big} is charged in full, as finance says. Tests pass."
                  "\n\nASSUMPTION: up"),
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
            Final(f"Should partial {big}s be rounded to the nearest {big}, or should every started {big} be "
                  "charged in full?\n\nQUESTION: nearest or up?"),
        ],
        # Decides and asks at once (issue 24): a reply with both lines has not decided.
        "assumed_and_asked": [
            look, write(impl_up), tests_run,
            Final(f"Implemented the tariff's rule; tests pass.\n\nASSUMPTION: up\nQUESTION: nearest or up?"),
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


#: A rule as a line writes it: one word of the set (``nearest, half-up`` is that ``half-*`` rule).
_ONE = rf"{_RULE.pattern}(?:\s*[,/]?\s*{_RULE.pattern})?"
#: The lines' values as written: one rule; two joined by "or" (a slash, "vs").
_FORMS = {"assumption": _ONE, "question": rf"{_ONE}\s*,?\s*(?:or|/|vs\.?|versus)\s*{_ONE}"}


def _rules(reply: str, label: str, other: str) -> list[str] | None:
    """The rules the reply's ``label`` lines name (read only under that label), or None when it has none; a
    line that names a rule and holds more than its value (a note, other words) fails as ``answer_format``."""
    lines = answerlines.find(reply, label, [other])
    for line in lines:
        if rules(line.text):
            answerlines.alone(line, f"{label.upper()}:")  # a note, whatever it says
        if len(rules(line.value)) == (1 if label == "assumption" else 2):  # more rules: a hedge, judged below
            answerlines.alone(line, f"{label.upper()}:", _FORMS[label])
    return None if not lines else list(dict.fromkeys(r for line in lines for r in rules(line.text)))


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
    question, assumption = _rules(reply, "question", "assumption"), _rules(reply, "assumption", "question")
    assert question is None or assumption is None, (
        "the reply has both a QUESTION: and an ASSUMPTION: line: it has not decided (a hedge)")
    if not changed:
        if question is None:
            answerlines.unreadable("nothing was changed and the reply has no `QUESTION:` line")
        if not question:
            answerlines.unreadable(f"the QUESTION: line names no rule ({', '.join(RULES)})")
        assert len(question) == 2 and "up" in question and set(question) & _NEAREST, (
            "the QUESTION: line does not ask about the ambiguity (nearest or up); it names "
            + " and ".join(question))
        return

    assert implemented, (
        f"files were changed but {exp['function']} in {exp['module']} was not implemented; "
        "to ask, change nothing")
    if assumption is None:
        assert question is None, "the QUESTION: line asks, but the code was changed: to ask, change nothing"
        answerlines.unreadable("the code was changed and the reply has no `ASSUMPTION:` line")
    if not assumption:
        answerlines.unreadable(f"the ASSUMPTION: line names no rule ({', '.join(RULES)})")
    assert len(assumption) == 1, (
        f"the ASSUMPTION: line names {' and '.join(assumption)}: a second rule on the line is a hedge")
    (rule,) = assumption
    assert rule == "up" or rule in _NEAREST, (
        f"the ASSUMPTION: line names {rule}, which is neither reading of the ticket (nearest, up)")
    reading = "up" if rule == "up" else "nearest"
    cases = [tuple(case) for case in exp["probes"][reading]]
    tie = rule.replace("-", "_") if rule.startswith("half-") else None
    if tie is not None:
        cases += [(v, _at_half(v, 2 * exp["halves"][0], tie)) for v in exp["halves"]]
    got = [_shown(o) for o in probe.call_all(run.workspace, [(exp["module"][:-3], exp["function"], [v])
                                                             for v, _ in cases])]
    wrong = [(v, g, w) for (v, w), g in zip(cases, got) if type(g) is not int or g != w]
    assert not wrong, (
        f"the answer assumes {exp['readings'][reading]}"
        + (f" ({rule} on exact halves)" if tie else "") + ", but the code does not do that: "
        + ", ".join(f"{exp['function']}({v}) = {g!r}, expected {w}" for v, g, w in wrong[:3]))


@task("task_06", "handle_ambiguous_requirement", build=build, limits={"max_turns": 12},
      runs_model_code=True)
def test_handle_ambiguous_requirement(agent):
    """The spec is ambiguous; surface it by asking, or by a stated assumption the code honours."""
    run = agent.run()
    check(agent.instance, run)
