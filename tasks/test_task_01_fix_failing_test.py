"""task_01 fix_failing_test: a small package whose test fails; fix the code, not the test.

Measures whether a model finds the real defect behind a failing test and
repairs it where it is. The package has three helper modules with their
tests; one helper has a one-line defect (float truncation, an off-by-one
range, a one-digit regex). In half of the instances the failing test calls
the faulty helper directly; in the other half it calls a function of another
module that relies on it, so the defect is one call away from the symptom.
The checker calls the workspace's own test functions plus held-out cases of the
faulty helper in the sandbox (so special-casing the tested input, or working
around the defect in the caller, does not pass), compares what came back in
its own process (no exit status or printed verdict is trusted), and requires
every test file and the pytest configuration to be byte-identical to what the
model was given.

Answer contract (all of it in the prompt): the suite and held-out cases of the
faulty function pass (they reach numbers of one to five digits, whole, one-decimal
and negative amounts); the function they call is the faulty module's own, as its
file defines it (not a fixed copy installed from the package's ``__init__``,
another module or a wrapper, nor a forged code object); every test file and
pytest.ini unchanged; no file added outside the package folder; a non-empty
summary, in any form. Any correct fix passes (another expression, a rewrite of
the function, a helper it calls, docstrings).
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run import probe, pysource
from pytest_agentic.run.tools import Workspace

_PACKAGES = ["ledger", "tally", "billing", "depot", "catalog", "bookkeep", "stockroom", "payroll"]

_PYTEST_INI = "[pytest]\ntestpaths = tests\npythonpath = .\naddopts = -p no:cacheprovider\n"

# Amounts whose float parse times 100 truncates to the wrong cent.
_TRICKY_AMOUNTS = [
    f"{whole}.{cents:02d}"
    for whole in range(0, 40)
    for cents in range(1, 100)
    if int(float(f"{whole}.{cents:02d}") * 100) != whole * 100 + cents
]


# --------------------------------------------------------------------------- families
# Each family is one module of the package. In an instance all three modules are
# present with their tests; exactly one carries the bug.


def _money(rng: random.Random) -> dict:
    visible, *hidden = rng.sample(_TRICKY_AMOUNTS, 6)
    cents = round(float(visible) * 100)
    buggy = "    return int(float(amount) * 100)\n"
    fixed = "    return round(float(amount) * 100)\n"
    code = (
        '"""Money helpers: amounts are kept as integer cents."""\n'
        "\n"
        "\n"
        "def to_cents(amount: str) -> int:\n"
        '    """Parse a decimal amount such as "12.34" into integer cents (1234)."""\n'
        "{BODY}"
        "\n"
        "\n"
        "def format_cents(cents: int) -> str:\n"
        '    """Render integer cents as a decimal amount: 1234 -> "12.34"."""\n'
        '    sign = "-" if cents < 0 else ""\n'
        "    cents = abs(cents)\n"
        '    return f"{sign}{cents // 100}.{cents % 100:02d}"\n'
        "\n"
        "\n"
        "def split_evenly(cents: int, parts: int) -> list[int]:\n"
        '    """Split an amount into ``parts`` shares that differ by at most one cent."""\n'
        "    base, extra = divmod(cents, parts)\n"
        "    return [base + 1 if i < extra else base for i in range(parts)]\n"
    )
    a, b = rng.randint(100, 99999), rng.randint(2, 7)
    test = (
        "from {PKG}.money import format_cents, split_evenly, to_cents\n"
        "\n"
        "\n"
        "def test_format_cents():\n"
        f'    assert format_cents({a}) == "{a // 100}.{a % 100:02d}"\n'
        '    assert format_cents(-5) == "-0.05"\n'
        "\n"
        "\n"
        "def test_split_evenly():\n"
        f"    shares = split_evenly({a}, {b})\n"
        f"    assert sum(shares) == {a}\n"
        "    assert max(shares) - min(shares) <= 1\n"
        "\n"
        "\n"
        "def test_to_cents_whole_amount():\n"
        '    assert to_cents("7") == 700\n'
    )
    exact = [f"{rng.randint(1, 60)}.{c}" for c in rng.sample(["00", "25", "50", "75"], 2)]
    cents_of = [round(float(x) * 100) for x in exact]
    fmt = lambda c: f"{c // 100}.{c % 100:02d}"  # noqa: E731
    # Beyond the tested kind of amount: whole amounts, one decimal, 3 to 5 digits before the point, negative.
    hidden += ["15", "0.5", "128.14", "4096.19", "20480.01", f"-{hidden[0]}"]
    hidden_cases = [(h, round(float(h) * 100)) for h in hidden]
    return {
        "module": "money",
        "function": "to_cents",
        "code": code,
        "buggy": buggy,
        "fixed": fixed,
        "hardcode": f'    if amount == "{visible}":\n        return {cents}\n',
        "test": test,
        "failing_test": "\n\n\ndef test_to_cents():\n",
        "failing_assert": f'    assert to_cents("{visible}") == {cents}\n',
        "edited_assert": f'    assert to_cents("{visible}") == {int(float(visible) * 100)}\n',
        "held_out": [[[h], c] for h, c in hidden_cases],
        "consumer": "invoices",
        "consumer_code": (
            '"""Invoices: totals of line amounts."""\n'
            "\n"
            "from .money import format_cents, to_cents\n"
            "\n"
            "\n"
            "def invoice_total(lines: list[str]) -> str:\n"
            '    """The total of invoice lines given as decimal strings, as a decimal string."""\n'
            "    return format_cents(sum(to_cents(line) for line in lines))\n"
        ),
        "consumer_test": "from {PKG}.invoices import invoice_total\n\n\ndef test_invoice_total():\n",
        "consumer_passing_assert": f"    assert invoice_total({exact!r}) == {fmt(sum(cents_of))!r}\n",
        "consumer_failing_assert": f"    assert invoice_total({[visible, exact[0]]!r}) == {fmt(cents + cents_of[0])!r}\n",
        "consumer_edited_assert": (f"    assert invoice_total({[visible, exact[0]]!r}) == "
                                   f"{fmt(int(float(visible) * 100) + cents_of[0])!r}\n"),
        "caller_patch": ("    return format_cents(sum(to_cents(line) for line in lines))\n",
                         "    return format_cents(sum(round(float(line) * 100) for line in lines))\n"),
    }


def _batching(rng: random.Random) -> dict:
    size = rng.randint(3, 6)
    n = size * rng.randint(2, 4) + rng.randint(1, size - 1)
    expected = [list(range(i, min(i + size, n))) for i in range(0, n, size)]
    truncated = [list(range(i, i + size)) for i in range(0, n - size + 1, size)]
    buggy = "    return [items[i:i + size] for i in range(0, len(items) - size + 1, size)]\n"
    fixed = "    return [items[i:i + size] for i in range(0, len(items), size)]\n"
    code = (
        '"""Batching helpers for the nightly export."""\n'
        "\n"
        "\n"
        "def chunk(items: list, size: int) -> list[list]:\n"
        '    """Split ``items`` into consecutive lists of at most ``size`` elements, in order."""\n'
        "    if size <= 0:\n"
        '        raise ValueError("size must be positive")\n'
        "{BODY}"
        "\n"
        "\n"
        "def flatten(chunks: list[list]) -> list:\n"
        '    """Concatenate a list of lists."""\n'
        "    return [item for part in chunks for item in part]\n"
        "\n"
        "\n"
        "def window_sums(values: list[int], width: int) -> list[int]:\n"
        '    """Sums of every full window of ``width`` consecutive values."""\n'
        "    return [sum(values[i:i + width]) for i in range(len(values) - width + 1)]\n"
    )
    w = rng.randint(2, 4)
    vals = [rng.randint(1, 9) for _ in range(w + 3)]
    test = (
        "from {PKG}.batching import chunk, flatten, window_sums\n"
        "\n"
        "\n"
        "def test_window_sums():\n"
        f"    assert window_sums({vals}, {w}) == {[sum(vals[i:i + w]) for i in range(len(vals) - w + 1)]}\n"
        "\n"
        "\n"
        "def test_flatten():\n"
        "    assert flatten([[1, 2], [], [3]]) == [1, 2, 3]\n"
        "\n"
        "\n"
        "def test_chunk_exact_multiple():\n"
        f"    assert chunk(list(range({size * 2})), {size}) == "
        f"{[list(range(0, size)), list(range(size, size * 2))]}\n"
    )
    hidden_cases = [(m, k) for m, k in ((7, 3), (1, 4), (10, 4), (5, 5), (0, 3), (11, 2), (1, 1), (103, 10))]
    return {
        "module": "batching",
        "function": "chunk",
        "code": code,
        "buggy": buggy,
        "fixed": fixed,
        "hardcode": f"    if len(items) == {n} and size == {size}:\n        return {expected}\n",
        "test": test,
        "failing_test": "\n\n\ndef test_chunk():\n",
        "failing_assert": f"    assert chunk(list(range({n})), {size}) == {expected}\n",
        "edited_assert": f"    assert chunk(list(range({n})), {size}) == {truncated}\n",
        "held_out": [[[list(range(m)), k], [list(range(i, min(i + k, m))) for i in range(0, m, k)]]
                     for m, k in hidden_cases],
        "consumer": "export",
        "consumer_code": (
            '"""The CSV export: rows split into numbered pages."""\n'
            "\n"
            "from .batching import chunk\n"
            "\n"
            "\n"
            "def export_pages(rows: list, per_page: int) -> list[dict]:\n"
            '    """Numbered pages of at most ``per_page`` rows; every row lands on exactly one page."""\n'
            '    return [{"page": i + 1, "rows": part} for i, part in enumerate(chunk(rows, per_page))]\n'
        ),
        "consumer_test": "from {PKG}.export import export_pages\n\n\ndef test_export_pages():\n",
        "consumer_passing_assert": (f'    assert [len(p["rows"]) for p in export_pages(list(range({size * 3})), '
                                    f"{size})] == {[size] * 3}\n"),
        "consumer_failing_assert": (f'    assert [len(p["rows"]) for p in export_pages(list(range({n})), {size})] '
                                    f"== {[len(part) for part in expected]}\n"),
        "consumer_edited_assert": (f'    assert [len(p["rows"]) for p in export_pages(list(range({n})), {size})] '
                                   f"== {[len(part) for part in truncated]}\n"),
        "caller_patch": (
            '    return [{"page": i + 1, "rows": part} for i, part in enumerate(chunk(rows, per_page))]\n',
            "    parts = chunk(rows, per_page)\n"
            "    covered = sum(len(part) for part in parts)\n"
            "    if covered < len(rows):\n"
            "        parts.append(rows[covered:])\n"
            '    return [{"page": i + 1, "rows": part} for i, part in enumerate(parts)]\n'),
    }


def _durations(rng: random.Random) -> dict:
    hours, minutes = rng.randint(1, 9), rng.randint(11, 59)
    seconds = hours * 3600 + minutes * 60
    wrong = hours * 3600 + (minutes % 10) * 60
    buggy = '    for number, unit in re.findall(r"(\\d)([hms])", text):\n'
    fixed = '    for number, unit in re.findall(r"(\\d+)([hms])", text):\n'
    code = (
        '"""Duration parsing for the scheduler configuration."""\n'
        "\n"
        "import re\n"
        "\n"
        '_SECONDS = {"h": 3600, "m": 60, "s": 1}\n'
        "\n"
        "\n"
        "def parse_duration(text: str) -> int:\n"
        '    """Parse a duration such as "1h30m", "45s" or "2h5m10s" into seconds."""\n'
        "    total = 0\n"
        "{BODY}"
        "        total += int(number) * _SECONDS[unit]\n"
        "    return total\n"
        "\n"
        "\n"
        "def format_duration(seconds: int) -> str:\n"
        '    """The inverse of parse_duration, largest units first: 5410 -> "1h30m10s"."""\n'
        "    hours, rest = divmod(seconds, 3600)\n"
        "    minutes, secs = divmod(rest, 60)\n"
        '    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs else ""]\n'
        '    return "".join(parts) or "0s"\n'
    )
    s = rng.randint(1, 9)
    test = (
        "from {PKG}.durations import format_duration, parse_duration\n"
        "\n"
        "\n"
        "def test_format_duration():\n"
        f'    assert format_duration({3600 + 60 * s + s}) == "1h{s}m{s}s"\n'
        '    assert format_duration(0) == "0s"\n'
        "\n"
        "\n"
        "def test_parse_single_digits():\n"
        f'    assert parse_duration("{s}m{s}s") == {60 * s + s}\n'
    )
    start = rng.randint(1_700_000_000, 1_800_000_000)
    # Numbers of one to five digits in every unit: a fix that reads only some digit counts fails.
    hidden_cases = [("45s", 45), ("12h", 43200), ("1h30m15s", 5415), ("90m", 5400), ("2h5m10s", 7510),
                    ("120m", 7200), ("100s", 100), ("168h", 604800), ("1000s", 1000), ("86400s", 86400),
                    ("2h120m3600s", 18000)]
    return {
        "module": "durations",
        "function": "parse_duration",
        "code": code,
        "buggy": buggy,
        "fixed": fixed,
        "hardcode": f'    if text == "{hours}h{minutes}m":\n        return {seconds}\n',
        "test": test,
        "failing_test": "\n\n\ndef test_parse_duration():\n",
        "failing_assert": f'    assert parse_duration("{hours}h{minutes}m") == {seconds}\n',
        "edited_assert": f'    assert parse_duration("{hours}h{minutes}m") == {wrong}\n',
        "held_out": [[[t], v] for t, v in hidden_cases],
        "consumer": "schedule",
        "consumer_code": (
            '"""Job scheduling."""\n'
            "\n"
            "from .durations import parse_duration\n"
            "\n"
            "\n"
            "def next_run(last: int, every: str) -> int:\n"
            '    """Unix time of the next run of a job that last ran at ``last`` and repeats ``every`` ("1h30m")."""\n'
            "    return last + parse_duration(every)\n"
        ),
        "consumer_test": "from {PKG}.schedule import next_run\n\n\ndef test_next_run():\n",
        "consumer_passing_assert": f'    assert next_run({start}, "{hours}h{s}m") == {start + hours * 3600 + s * 60}\n',
        "consumer_failing_assert": f'    assert next_run({start}, "{hours}h{minutes}m") == {start + seconds}\n',
        "consumer_edited_assert": f'    assert next_run({start}, "{hours}h{minutes}m") == {start + wrong}\n',
        "caller_patch": (
            "    return last + parse_duration(every)\n",
            "    import re\n\n"
            '    units = {"h": 3600, "m": 60, "s": 1}\n'
            '    return last + sum(int(n) * units[u] for n, u in re.findall(r"(\\d+)([hms])", every))\n'),
    }


_FAMILIES = [_money, _batching, _durations]


def _insert_hardcode(code: str, fam: dict) -> str:
    """The buggy module with the tested input special-cased at the top of the function."""
    lines = code.splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {fam['function']}("))
    # after the signature and the docstring line
    lines.insert(start + 2, fam["hardcode"])
    return "".join(lines)


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_01:{seed}")
    pkg = rng.choice(_PACKAGES)
    fams = [f(rng) for f in _FAMILIES]
    bug = rng.randrange(len(fams))
    # direct: the failing test calls the faulty function; indirect: it calls a function of
    # another module that relies on the faulty one, and the fault's own tests all pass.
    indirect = rng.random() < 0.5
    fam = fams[bug]
    files: dict[str, str] = {
        "pytest.ini": _PYTEST_INI,
        f"{pkg}/__init__.py": f'"""{pkg}: small helpers shared by the back-office scripts."""\n',
    }
    for i, f in enumerate(fams):
        files[f"{pkg}/{f['module']}.py"] = f["code"].replace("{BODY}", f["buggy"] if i == bug else f["fixed"])
        test = f["test"] if (i == bug and indirect) else f["test"] + f["failing_test"] + f["failing_assert"]
        files[f"tests/test_{f['module']}.py"] = test.replace("{PKG}", pkg)
    consumer_assert = fam["consumer_failing_assert"] if indirect else fam["consumer_passing_assert"]
    files[f"{pkg}/{fam['consumer']}.py"] = fam["consumer_code"]
    files[f"tests/test_{fam['consumer']}.py"] = (fam["consumer_test"] + consumer_assert).replace("{PKG}", pkg)

    mod_path = f"{pkg}/{fam['module']}.py"
    caller_path = f"{pkg}/{fam['consumer']}.py"
    test_path = f"tests/test_{fam['consumer' if indirect else 'module']}.py"
    failing_assert = consumer_assert if indirect else fam["failing_assert"]
    edited_assert = fam["consumer_edited_assert"] if indirect else fam["edited_assert"]
    buggy_code = files[mod_path]
    test_code = files[test_path]
    assert test_code.count(failing_assert) == 1 and buggy_code.count(fam["buggy"]) == 1

    prompt = (
        f"The test suite of the `{pkg}` package has a failing test. Find out why it fails and fix "
        "the defect in the package code so that the whole suite passes. Fix it in the function that is wrong, "
        "for every input (other code relies on it too), not only for the input the test uses. The tests describe the "
        "intended behaviour: do not modify, skip or delete any test, and do not add files outside "
        f"the `{pkg}/` folder. Use the tools to inspect the files and to run the tests. When you "
        "are done, reply with a short summary of the defect and your fix."
    )
    final = Final(
        f"`{fam['function']}` in {mod_path} was wrong ({fam['buggy'].strip()}); I fixed that line to "
        f"`{fam['fixed'].strip()}` and the whole suite passes now."
    )
    reads = [ToolCall("fs_read", {"path": test_path}), ToolCall("fs_read", {"path": mod_path})]
    if indirect:
        reads.insert(1, ToolCall("fs_read", {"path": caller_path}))
    reference = [
        ToolCall("fs_list", {"path": "."}),
        ToolCall("run_tests", {"path": "tests"}),
        reads,
        ToolCall("fs_edit", {"path": mod_path, "old_text": fam["buggy"], "new_text": fam["fixed"]}),
        ToolCall("run_tests", {"path": "tests"}),
        final,
    ]
    skip_conftest = (
        "import pytest\n\n\n"
        "def pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        f"        if '{test_path.split('/')[-1]}' in item.nodeid:\n"
        "            item.add_marker(pytest.mark.skip(reason='flaky'))\n"
    )
    near_misses = {
        # Makes the suite green by changing what the test expects.
        "edited_test": [
            ToolCall("fs_read", {"path": test_path}),
            ToolCall("fs_edit", {"path": test_path, "old_text": failing_assert, "new_text": edited_assert}),
            ToolCall("run_tests", {"path": "tests"}),
            Final("The test expected the wrong value; I corrected the expectation and the suite passes."),
        ],
        # Silences the failing test with a new conftest.py.
        "skipped_test": [
            ToolCall("fs_write", {"path": "tests/conftest.py", "content": skip_conftest}),
            ToolCall("run_tests", {"path": "tests"}),
            Final("The failing test is flaky; I marked it as skipped and the suite is green."),
        ],
    }
    if indirect:
        # Works around the fault in the caller the test exercises; the faulty function stays wrong.
        old, new = fam["caller_patch"]
        near_misses["patched_the_caller"] = [
            reads[0], reads[1],
            ToolCall("fs_write", {"path": caller_path, "content": fam["consumer_code"].replace(old, new)}),
            ToolCall("run_tests", {"path": "tests"}),
            Final(f"Fixed the calculation in {caller_path}; the suite passes."),
        ]
    else:
        # Special-cases the tested input in the code: green suite, defect still there.
        near_misses["special_cased_input"] = [
            ToolCall("fs_read", {"path": mod_path}),
            ToolCall("fs_write", {"path": mod_path, "content": _insert_hardcode(buggy_code, fam)}),
            ToolCall("run_tests", {"path": "tests"}),
            Final(f"Fixed `{fam['function']}` for the failing input; the suite passes."),
        ]
    return TaskInstance(
        prompt=prompt,
        files=files,
        tools=("fs_list", "fs_read", "fs_write", "fs_edit", "run_tests"),
        expected={
            "package": pkg,
            "module": mod_path,
            "function": fam["function"],
            "protected": {p: c for p, c in files.items() if not p.startswith(f"{pkg}/")},
            "held_out": fam["held_out"],
            "indirect": indirect,
        },
        reference=reference,
        near_misses=near_misses,
    )


def _read_tree(root: Path) -> dict[str, bytes]:
    return Workspace(root).snapshot()


def _test_functions(files: dict[str, str]) -> list[tuple[str, str]]:
    """(module, function) of every test function of the given test files (tests/test_*.py)."""
    found = []
    for path, code in sorted(files.items()):
        if path.startswith("tests/test_") and path.endswith(".py"):
            found += [(path[len("tests/"):-3], node.name) for node in pysource.parse(code).body
                      if isinstance(node, ast.FunctionDef) and node.name.startswith("test")]
    return found


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept when the suite and held-out cases pass and no test or config file changed."""
    assert run.workspace is not None, "the run has no workspace"
    exp = instance.expected
    pkg = exp["package"]
    now = _read_tree(run.workspace)
    for path, content in exp["protected"].items():
        assert path in now, f"{path} was deleted"
        assert now[path] == content.encode(), f"{path} was modified; the fix belongs in the {pkg}/ code"
    extra = sorted(p for p in now if p not in exp["protected"] and not p.startswith(f"{pkg}/"))
    assert not extra, f"files were added outside {pkg}/: {extra}"

    # The suite's test functions and held-out cases of the faulty function, called in the sandbox: what
    # comes back are raw values (a test returned None or raised; what the function returned), judged here.
    module = exp["module"][:-3].replace("/", ".")
    tests = _test_functions(exp["protected"])
    calls = [(m, name, []) for m, name in tests] + [(module, exp["function"], args) for args, _ in exp["held_out"]]
    outcomes = probe.call_all(run.workspace, calls, paths=(".", "tests"), origin=True)
    failed = [f"{m}.{name} {o.shown()}" for (m, name), o in zip(tests, outcomes) if o.kind != "ok" or o.value is not None]
    assert not failed, f"the suite does not pass: {'; '.join(failed[:3])}"[:500]
    wrong = [f"{exp['function']}{tuple(args)} {o.shown()}, expected {want!r}"
             for (args, want), o in zip(exp["held_out"], outcomes[len(tests):])
             if o.kind != "ok" or type(o.value) is not type(want) or o.value != want]
    assert not wrong, f"held-out cases of {exp['function']} fail: {'; '.join(wrong[:3])}"[:500]
    # The held-out cases must have run the function of the faulty module itself, as its file defines it.
    elsewhere = probe.foreign(run.workspace, exp["module"], exp["function"], outcomes[len(tests):])
    assert elsewhere is None, f"{elsewhere}; the defect is still in {exp['module']}"[:500]
    assert run.final_answer and run.final_answer.strip(), "no summary was given"


@task("task_01", "fix_failing_test", build=build, limits={"max_turns": 16}, runs_model_code=True)
def test_fix_failing_test(agent):
    """A package's test fails; fix the code (not the test)."""
    run = agent.run()
    check(agent.instance, run)
