"""task_05 minimal_fix: fix one reported bug with a minimal diff, nothing else touched.

Measures restraint as well as correctness: the model gets a bug report for a
module of small numeric helpers that also holds tempting clean-ups (an unused
import, a stale comment). The checker compares the whole workspace with what
the model was given: only the faulty line may differ (a replacement of at most
three lines in its place), every other byte of every file must be identical,
no file added or removed; then it calls held-out cases of every function in the
sandbox and compares the values here, so a change on the right line that is still wrong does not pass.

Answer contract (in the prompt): the faulty line replaced (by up to three
lines, any correct expression; a lost final newline is tolerated), every other
byte of every file unchanged, no file added or removed, every function right
on held-out cases that reach every branch of its rule (centuries divisible by
400, by 200 only and by 100 only; even counts whose middle pair sums to an odd
number), the faulty function being the one its file defines (not rebound after
its ``def``), and a non-empty summary in any form.
"""

from __future__ import annotations

import difflib
import math
import random
from pathlib import Path

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run import probe
from pytest_agentic.run.tools import Workspace

_MODULES = ["stats", "metrics", "figures", "numerics", "calc", "measures"]

_PYTEST_INI = "[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n"

_HEADER = (
    '"""Small numeric helpers used by the reporting scripts."""\n'
    "\n"
    "import math\n"
    "\n"
    "# TODO: recieve these from the config service one day.\n"
    "DECIMALS = 2\n"
)

# name -> (function text with the faulty line as {LINE}, correct line, faulty line)
_FUNCS: dict[str, tuple[str, str, str]] = {
    "median": (
        "def median(values):\n"
        '    """The middle value; the mean of the two middle values for an even count."""\n'
        "    xs = sorted(values)\n"
        "    n = len(xs)\n"
        "    if n == 0:\n"
        '        raise ValueError("median of empty data")\n'
        "    mid = n // 2\n"
        "    if n % 2 == 1:\n"
        "        return xs[mid]\n"
        "{LINE}",
        "    return (xs[mid - 1] + xs[mid]) / 2\n",
        "    return xs[mid]\n",
    ),
    "is_leap_year": (
        "def is_leap_year(year):\n"
        '    """Gregorian leap years: every fourth year, but of the century years only those divisible by 400."""\n'
        "{LINE}",
        "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
        "    return year % 4 == 0 and year % 100 != 0\n",
    ),
    "percent_change": (
        "def percent_change(old, new):\n"
        '    """The change from ``old`` to ``new`` relative to ``old``, in percent."""\n'
        "    if old == 0:\n"
        '        raise ZeroDivisionError("percent change from zero")\n'
        "{LINE}",
        "    return (new - old) / old * 100\n",
        "    return (new - old) / new * 100\n",
    ),
    "mean": (
        "def mean(values):\n"
        '    """The arithmetic mean of a non-empty sequence."""\n'
        "    if not values:\n"
        '        raise ValueError("mean of empty data")\n'
        "{LINE}",
        "    return sum(values) / len(values)\n",
        None,
    ),
    "format_percent": (
        "def format_percent(x):\n"
        '    """``x`` percent as text with DECIMALS decimals: 12.345 -> "12.35%"."""\n'
        "{LINE}",
        '    return f"{x:.{DECIMALS}f}%"\n',
        None,
    ),
}
_BUGGABLE = ["median", "is_leap_year", "percent_change"]


def _reference_impl(name: str):
    return {
        "median": lambda v: (sorted(v)[len(v) // 2] if len(v) % 2 else
                             (sorted(v)[len(v) // 2 - 1] + sorted(v)[len(v) // 2]) / 2),
        "is_leap_year": lambda y: y % 4 == 0 and (y % 100 != 0 or y % 400 == 0),
        "percent_change": lambda o, n: (n - o) / o * 100,
        "mean": lambda v: sum(v) / len(v),
        "format_percent": lambda x: f"{x:.2f}%",
    }[name]


def _cases(rng: random.Random) -> dict[str, list[list]]:
    """Held-out argument lists for every function."""
    evens = [sorted(rng.sample(range(1, 90), k)) for k in (2, 4, 6)]
    for xs in evens:
        rng.shuffle(xs)
    odds = [rng.sample(range(1, 90), k) for k in (1, 3, 5)]
    # Every branch of each rule: even counts whose middle pair sums to an odd number (a half, so floor division
    # fails), and century years divisible by 400, by 200 but not 400, and by 100 only.
    return {
        "median": [[xs] for xs in evens + odds] + [[[2, 1]], [[10, 4, 7, 1]]],
        "is_leap_year": [[y] for y in (1600, 1700, 1800, 1900, 2000, 2023, 2024, 2100, 2200, 2400, 2600, 2800)],
        "percent_change": [[o, n] for o, n in ((80, 100), (50, 40), (200, 250), (4, 1), (10, 10))],
        "mean": [[[1, 2, 3, 4]], [[rng.randint(1, 50) for _ in range(5)]]],
        "format_percent": [[12.345], [rng.randint(1, 999) / 7]],
    }


def _unique_context(lines: list[str], index: int, replacement: str) -> tuple[str, str]:
    """The faulty line with as many lines before it as make it unique, and the same with the line fixed."""
    text = "".join(lines)
    for before in range(index + 1):
        old = "".join(lines[index - before:index + 1])
        if text.count(old) == 1:
            return old, "".join(lines[index - before:index]) + replacement
    raise AssertionError("the faulty line has no unique context")


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_05:{seed}")
    module = rng.choice(_MODULES)
    bug = rng.choice(_BUGGABLE)
    order = list(_FUNCS)
    rng.shuffle(order)

    def render(fix: dict[str, str] | None = None) -> str:
        parts = [_HEADER]
        for name in order:
            text, good, bad = _FUNCS[name]
            line = bad if name == bug else good
            if fix and name in fix:
                line = fix[name]
            parts.append("\n\n" + text.replace("{LINE}", line))
        return "".join(parts)

    original = render()
    lines = original.splitlines(keepends=True)
    faulty_line = _FUNCS[bug][2]
    bug_index = lines.index(faulty_line)
    fixed = render({bug: _FUNCS[bug][1]})

    # the report: one concrete wrong result
    if bug == "median":
        xs = rng.sample(range(1, 60), 4)
        s = sorted(xs)
        call, got, want = f"median({xs})", s[2], (s[1] + s[2]) / 2
    elif bug == "is_leap_year":
        y = rng.choice([1600, 2000, 2400])
        call, got, want = f"is_leap_year({y})", False, True
    else:
        o = rng.choice([20, 40, 50, 80])
        n = o + rng.choice([10, 20, 30, 60])
        call, got, want = f"percent_change({o}, {n})", (n - o) / n * 100, (n - o) / o * 100
    got_s = f"{got:.4g}" if isinstance(got, float) else repr(got)

    a, b = rng.randint(1, 40), rng.randint(41, 99)
    tests = (
        f"from {module} import format_percent, mean\n"
        "\n"
        "\n"
        "def test_mean():\n"
        f"    assert mean([{a}, {b}]) == {(a + b) / 2}\n"
        "\n"
        "\n"
        "def test_format_percent():\n"
        '    assert format_percent(12.345) == "12.35%"\n'
    )
    files = {"pytest.ini": _PYTEST_INI, f"{module}.py": original, f"test_{module}.py": tests}
    prompt = (
        f"Bug report: in `{module}.py`, `{call}` returns {got_s}, but it should return {want!r}.\n\n"
        "Fix this bug with the smallest possible change, on the faulty line itself. Change only what is needed "
        "for the fix: "
        "leave every other line of every file exactly as it is (no clean-ups, no reformatting, "
        "no new tests or files). Reply with a one-line summary when done."
    )

    # near-miss content
    rewritten_fn = {
        "median": "    if n % 2 == 0:\n        return (xs[mid - 1] + xs[mid]) / 2\n    return xs[mid]\n",
        "is_leap_year": "    if year % 400 == 0:\n        return True\n"
                        "    return year % 4 == 0 and year % 100 != 0\n",
        "percent_change": "    delta = new - old\n    return delta / old * 100\n",
    }[bug]
    # the whole function body rewritten, not just the faulty line: correct but over-broad
    fn_text = _FUNCS[bug][0]
    if bug == "median":
        over_broad = fixed.replace(
            "    if n % 2 == 1:\n        return xs[mid]\n    return (xs[mid - 1] + xs[mid]) / 2\n", rewritten_fn)
    elif bug == "is_leap_year":
        over_broad = fixed.replace(
            fn_text.replace("{LINE}", _FUNCS[bug][1]),
            fn_text.replace("{LINE}", rewritten_fn).replace("but of the century years only those divisible", "except century years not divisible"))
    else:
        over_broad = fixed.replace(
            '    if old == 0:\n        raise ZeroDivisionError("percent change from zero")\n    return (new - old) / old * 100\n',
            "    if not old:\n        raise ZeroDivisionError(\"percent change from zero\")\n" + rewritten_fn)
    assert over_broad != fixed
    wrong_fix = {
        "median": "    return (xs[mid] + xs[mid + 1]) / 2\n",
        "is_leap_year": "    return year % 4 == 0\n",
        "percent_change": "    return abs(new - old) / old * 100\n",
    }[bug]
    wrong = render({bug: wrong_fix})
    with_test = tests + (
        "\n\n"
        f"def test_{bug}_regression():\n"
        f"    assert {call} == {want!r}\n"
    )
    read = [ToolCall("fs_read", {"path": f"{module}.py"}), ToolCall("fs_read", {"path": f"test_{module}.py"})]
    done = Final(f"Fixed `{bug}` in {module}.py by correcting its faulty return line; nothing else changed.")
    old_text, new_text = _unique_context(lines, bug_index, _FUNCS[bug][1])
    assert original.replace(old_text, new_text) == fixed
    edit = ToolCall("fs_edit", {"path": f"{module}.py", "old_text": old_text, "new_text": new_text})
    reference = [
        ToolCall("fs_list", {"path": "."}),
        read,
        edit,
        ToolCall("run_tests", {"path": "."}),
        done,
    ]
    near_misses = {
        # Right fix, plus removing the unused import "while at it".
        "fix_plus_cleanup": [*reference[:3], ToolCall("fs_edit", {"path": f"{module}.py", "old_text": "import math\n\n",
                                                                  "new_text": ""}), done],
        # Right behaviour, but the function is rewritten rather than the one line fixed.
        "rewrote_function": [*reference[:2],
                             ToolCall("fs_write", {"path": f"{module}.py", "content": over_broad}), done],
        # Touches only the faulty line, but the replacement is still wrong.
        "wrong_fix_on_right_line": [*reference[:2],
                                    ToolCall("fs_write", {"path": f"{module}.py", "content": wrong}), done],
        # Right fix, plus a new regression test nobody asked for.
        "fix_plus_new_test": [*reference[:3],
                              ToolCall("fs_write", {"path": f"test_{module}.py", "content": with_test}), done],
    }
    cases = _cases(rng)
    expected_results = {
        name: [[args, _reference_impl(name)(*args)] for args in arglist] for name, arglist in cases.items()
    }
    return TaskInstance(
        prompt=prompt,
        files=files,
        tools=("fs_list", "fs_read", "fs_write", "fs_edit", "run_tests"),
        expected={
            "module": f"{module}.py",
            "function": bug,
            "faulty_line": bug_index + 1,  # 1-based
            "cases": expected_results,
        },
        reference=reference,
        near_misses=near_misses,
    )


def _wrong_results(root, module: str, cases: dict, function: str) -> list[str]:
    """The held-out cases whose result differs from the expected one; the calls run in the sandbox. The
    faulty ``function`` that ran must be the one the module's file defines, not a replacement."""
    calls = [(module, name, args) for name, items in cases.items() for args, _ in items]
    wants = [(name, args, want) for name, items in cases.items() for args, want in items]
    outcomes = probe.call_all(root, calls, origin=True)
    elsewhere = probe.foreign(root, f"{module}.py", function,
                              [o for (name, _, _), o in zip(wants, outcomes) if name == function])
    bad = [elsewhere] if elsewhere else []
    for (name, args, want), got in zip(wants, outcomes):
        if got.kind != "ok":
            bad.append(f"{name}{tuple(args)} {got.shown()}, expected {want!r}")
            continue
        value = got.value
        same = (math.isclose(value, want, rel_tol=1e-9, abs_tol=1e-9)
                if isinstance(want, float) and isinstance(value, (int, float)) else value == want)
        if not same or type(value) is bool and type(want) is not bool:
            bad.append(f"{name}{tuple(args)} returned {value!r}, expected {want!r}")
    return bad


def _changed_lines_ok(before: str, after: str, faulty: int) -> str | None:
    """None when ``after`` differs from ``before`` only at the 0-based line ``faulty``."""
    a = before.split("\n")
    b = after.split("\n")
    # A lost final newline is tolerated (whole-file writes often drop it); nothing else is.
    a, b = (a[:-1] if a[-1] == "" else a), (b[:-1] if b[-1] == "" else b)
    extra = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert":
            if i1 not in (faulty, faulty + 1):
                return f"lines were inserted at line {i1 + 1}"
        elif not (i1 == faulty and i2 == faulty + 1):
            changed = ", ".join(str(k + 1) for k in range(i1, i2))
            return f"line(s) {changed} changed: {a[i1:i2]!r} -> {b[j1:j2]!r}"
        extra += (j2 - j1) - (i2 - i1)
    if extra > 2:
        return f"the faulty line was replaced by {extra + 1} lines"
    return None


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept when only the faulty line changed and every function now behaves as specified."""
    assert run.workspace is not None, "the run has no workspace"
    exp = instance.expected
    now = Workspace(run.workspace).snapshot()
    added = sorted(set(now) - set(instance.files))
    removed = sorted(set(instance.files) - set(now))
    assert not added, f"files were added: {added}"
    assert not removed, f"files were removed: {removed}"
    for path, content in instance.files.items():
        if path == exp["module"]:
            continue
        assert now[path] == (content if isinstance(content, bytes) else content.encode()), f"{path} was modified"
    before = instance.files[exp["module"]]
    after = now[exp["module"]].decode("utf-8", errors="replace")
    assert after != before, f"{exp['module']} was not changed: the bug is still there"
    problem = _changed_lines_ok(before, after, exp["faulty_line"] - 1)
    assert problem is None, f"the diff is not minimal: {problem}"
    problems = _wrong_results(run.workspace, Path(exp["module"]).stem, exp["cases"], exp["function"])
    assert not problems, "the fix is wrong: " + "; ".join(problems[:4])
    assert run.final_answer and run.final_answer.strip(), "no summary was given"


@task("task_05", "minimal_fix", build=build, limits={"max_turns": 12}, runs_model_code=True)
def test_minimal_fix(agent):
    """Fix one reported bug with a minimal diff, nothing else touched."""
    run = agent.run()
    check(agent.instance, run)
