"""task_02 refactor_duplicated_code: consolidate three near-identical functions, behaviour unchanged.

Measures whether a model picks the right abstraction. Three report functions
share their whole body, but one of them differs from the other two in one
small way (it rounds to whole units, negates amounts, sorts by id, or also
skips zero amounts), so a helper that only covers the obvious differences
changes behaviour. The checker judges the outcome on the code: the three
functions keep their names and their outputs on held-out inputs (called in the
sandbox, the outputs compared here; "every input" includes the rows a function skips given only the keys
it reads of them, and each input again as a one-pass iterator: see :func:`_held_out`), all three delegate to one shared helper defined in the
workspace, each is now a fraction of its former size, and no two blocks of the
whole workspace keep one shape (revision 4; see :func:`_copies`). The tests must
be left unchanged.

The copy rule judges the module, not its surface: every block of every module of the
workspace (functions, nested functions, lambdas, loops, comprehensions, and the statement
lists of every branch: ``if``/``else``, ``match`` cases, ``with``, ``try``), and of the code
that its string constants hold (what an ``exec`` would run), is reduced to its shape, the
kinds of its syntax nodes in order with every name, attribute and constant alike; two blocks,
neither inside the other and each at least as large as the thin bar (half an original
function), whose shapes agree at 80% or more (:class:`difflib.SequenceMatcher`) are two
copies of one body. A dispatcher over per-kind copies, the odd body beside one shared plain
body, or copies behind a dict of callables all fail; the three thin delegates, alike by
design, are below the bar. Copies restructured until no two shapes agree fail when executed: traced in
the sandbox on the held-out inputs, a function that runs most of a body at places neither other one runs
keeps its own copy (see :data:`_OWN_SHARE`). Written by hand on the standard library's :mod:`ast` and
:mod:`difflib`: pylint's similarity checker compares runs of source lines (a renamed copy in a
branch escapes it), and the AST-based clone detectors on PyPI (clonedigger, pycode-similar) are
unmaintained since 2010 and 2020 and compare whole functions, not branches nor code in strings.

Answer contract (all of it in the prompt): same names and outputs for every input; one shared
helper (any name, signature or place in the workspace, a function, a class or
functools.partial) that all three use; each of the three a thin delegate; no
copy of the duplicated body left anywhere in the workspace; the tests unchanged; a non-empty summary.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import random
import re
import textwrap

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run import probe, pysource
from pytest_agentic.run.tools import Workspace

_ENTITIES = ["orders", "refunds", "invoices", "payouts", "shipments", "transfers", "credits", "rentals"]
_SKIPS = ["cancelled", "void", "failed", "rejected", "draft", "expired"]
_MODULES = ["reports", "summaries", "statements", "exports"]
_PYTEST_INI = "[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n"

#: The one way the odd function differs from the other two.
_QUIRKS = ["whole_units", "negated", "sorted_by_id", "skips_zero"]

_FUNC = '''def NAME(PARAM):
    """Plain-text ENTITY report: one line per SINGULAR that is not SKIP, then the total."""
    lines = ["TITLE"]
    total = 0
    for VAR in ITER:
        if SKIPCOND:
            continue
        amount = AMOUNT
        total += amount
        lines.append(f"{VAR['id']:<W1}{amount:>W2.DEC}")
    lines.append(f"{'TOTAL':<W1}{total:>W2.DEC}")
    return "\\n".join(lines)
'''

_HELPER = '''def _report(title, rows, skip_status, EXTRA):
    """Plain-text report of ``rows``: one line per row whose status is not ``skip_status``, then the total."""
    lines = [title]
    total = 0
    for row in ITER:
        if SKIPCOND:
            continue
        amount = AMOUNT
        total += amount
        lines.append(f"{row['id']:<W1}{amount:>W2.DEC}")
    lines.append(f"{'TOTAL':<W1}{total:>W2.DEC}")
    return "\\n".join(lines)
'''

_THIN = '''def NAME(PARAM):
    """Plain-text ENTITY report: one line per SINGULAR that is not SKIP, then the total."""
    return _report("TITLE", PARAM, "SKIP"ARGS)
'''


def _fill(template: str, subs: dict[str, str]) -> str:
    for key in sorted(subs, key=len, reverse=True):
        template = template.replace(key, subs[key])
    return template


def _original_function(name, entity, skip, quirk, w1, w2):
    singular = entity[:-1]
    var = singular
    subs = {
        "NAME": name, "PARAM": entity, "ENTITY": entity, "SINGULAR": singular,
        "SKIP": skip, "TITLE": entity.upper(), "VAR": var, "W1": str(w1), "W2": str(w2),
        "ITER": entity, "SKIPCOND": f'{var}["status"] == "{skip}"', "AMOUNT": f'{var}["amount"]', "DEC": "2f",
    }
    if quirk == "whole_units":
        subs["DEC"] = "0f"
    elif quirk == "negated":
        subs["AMOUNT"] = f'-{var}["amount"]'
    elif quirk == "sorted_by_id":
        subs["ITER"] = f'sorted({entity}, key=lambda r: r["id"])'
    elif quirk == "skips_zero":
        subs["SKIPCOND"] = f'{var}["status"] == "{skip}" or {var}["amount"] == 0'
    return _fill(_FUNC, subs)


def _helper(quirk: str | None, w1: int, w2: int) -> str:
    subs = {"W1": str(w1), "W2": str(w2), "ITER": "rows", "SKIPCOND": 'row["status"] == skip_status',
            "AMOUNT": 'row["amount"]', "DEC": "2f"}
    extra = ""
    if quirk == "whole_units":
        extra, subs["DEC"] = "decimals=2", "{decimals}f"
    elif quirk == "negated":
        extra, subs["AMOUNT"] = "sign=1", 'sign * row["amount"]'
    elif quirk == "sorted_by_id":
        extra, subs["ITER"] = "by_id=False", '(sorted(rows, key=lambda r: r["id"]) if by_id else rows)'
    elif quirk == "skips_zero":
        extra, subs["SKIPCOND"] = "skip_zero=False", 'row["status"] == skip_status or (skip_zero and row["amount"] == 0)'
    text = _fill(_HELPER, subs)
    return text.replace(", EXTRA)", f", {extra})" if extra else ")")


_QUIRK_ARG = {"whole_units": ", decimals=0", "negated": ", sign=-1", "sorted_by_id": ", by_id=True",
              "skips_zero": ", skip_zero=True"}


def _thin(name, entity, skip, args=""):
    return _fill(_THIN, {"NAME": name, "PARAM": entity, "ENTITY": entity, "SINGULAR": entity[:-1],
                         "SKIP": skip, "TITLE": entity.upper(), "ARGS": args})


def _module(doc: str, parts: list[str]) -> str:
    return f'"""{doc}"""\n' + "".join("\n\n" + p for p in parts)


def _inputs(rng: random.Random, skips: list[str]) -> list[list[dict]]:
    statuses = [*skips, "paid", "paid", "open"]
    out: list[list[dict]] = [[]]
    for k in (1, 3, 5, 7, 8):
        rows = []
        for _ in range(k):
            amount = rng.choice([0.0, round(rng.uniform(-50, 900), 2), round(rng.uniform(0, 120), 2),
                                 float(rng.randint(1, 400)) + 0.5])
            rows.append({"id": f"{rng.choice('ABCKNPRTX')}-{rng.randint(100, 9999)}",
                         "amount": amount, "status": rng.choice(statuses)})
        out.append(rows)
    # make sure every quirk shows: a zero amount that is not skipped, unsorted ids, a .5 amount
    out.append([
        {"id": "Z-900", "amount": 0.0, "status": "paid"},
        {"id": "A-100", "amount": 12.5, "status": "paid"},
        {"id": "M-500", "amount": 7.25, "status": "open"},
    ])
    return out


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_02:{seed}")
    entities = rng.sample(_ENTITIES, 3)
    skips = rng.sample(_SKIPS, 3)
    module = rng.choice(_MODULES)
    quirk = rng.choice(_QUIRKS)
    odd = rng.randrange(3)
    w1, w2 = rng.randint(8, 12), rng.randint(10, 14)
    names = [f"{e}_report" for e in entities]
    doc = "Plain-text reports for the month-end pack."

    originals = [_original_function(names[i], entities[i], skips[i], quirk if i == odd else None, w1, w2)
                 for i in range(3)]
    original = _module(doc, originals)
    refactored = _module(doc, [_helper(quirk, w1, w2)] + [
        _thin(names[i], entities[i], skips[i], _QUIRK_ARG[quirk] if i == odd else "") for i in range(3)])
    wrong_abstraction = _module(doc, [_helper(None, w1, w2)] + [
        _thin(names[i], entities[i], skips[i]) for i in range(3)])
    partial = _module(doc, [_helper(None, w1, w2)] + [
        originals[i] if i == odd else _thin(names[i], entities[i], skips[i]) for i in range(3)])
    copies = []
    for i in range(3):
        impl = _original_function(f"_{entities[i]}_impl", entities[i], skips[i], quirk if i == odd else None, w1, w2)
        copies.append(impl)
        copies.append(
            f"def {names[i]}({entities[i]}):\n"
            f'    """Plain-text {entities[i]} report."""\n'
            f"    return _{entities[i]}_impl({entities[i]})\n")
    renamed_copies = _module(doc, copies)

    # expected outputs, from the original code itself
    namespace: dict = {}
    exec(compile(original, f"{module}.py", "exec"), namespace)  # our own generated code
    inputs = _inputs(rng, skips)
    outputs = {n: [namespace[n](rows) for rows in inputs] for n in names}

    # visible tests: one plain case per function, quirk-free input
    tests = [f"from {module} import {', '.join(names)}\n"]
    for i, n in enumerate(names):
        rows = [{"id": f"T-{rng.randint(10, 99)}", "amount": float(rng.randint(5, 90)), "status": "paid"},
                {"id": f"U-{rng.randint(10, 99)}", "amount": 10.0, "status": skips[i]}]
        if i == odd and quirk == "sorted_by_id":
            rows.sort(key=lambda r: r["id"])
        tests.append(f"\n\ndef test_{n}():\n    rows = {rows!r}\n    assert {n}(rows) == {namespace[n](rows)!r}\n")
    tests.append(f"\n\ndef test_empty():\n    assert {names[0]}([]) == {namespace[names[0]]([])!r}\n")
    test_code = "".join(tests)

    files = {"pytest.ini": _PYTEST_INI, f"{module}.py": original, f"test_{module}.py": test_code}
    prompt = (
        f"`{module}.py` holds three near-identical functions: {', '.join(f'`{n}`' for n in names)}. "
        "Refactor them: move the duplicated logic into one shared helper that all three use, so that each of "
        "the three only delegates to it and no copy of the duplicated body is left anywhere in the workspace "
        "(the whole workspace is judged: two copies in the branches of one helper, in nested functions, "
        "lambdas, strings or another module are still copies). "
        "Other code imports these three functions, so keep their names and arguments, and keep their "
        "behaviour exactly as it is now for every input. Do not change the tests. Run the tests when you "
        "are done, then reply with a short summary of the refactoring."
    )
    read = [ToolCall("fs_read", {"path": f"{module}.py"}), ToolCall("fs_read", {"path": f"test_{module}.py"})]
    done = Final(f"Moved the shared report logic of {', '.join(names)} into one helper `_report`; "
                 "the three functions now delegate to it and the tests pass.")
    write = lambda code: ToolCall("fs_write", {"path": f"{module}.py", "content": code})  # noqa: E731
    reference = [ToolCall("fs_list", {"path": "."}), read, write(refactored),
                 ToolCall("run_tests", {"path": "."}), done]
    near_misses = {
        # One helper for all three, but it drops what makes the odd function different.
        "wrong_abstraction": [read, write(wrong_abstraction), done],
        # The two alike functions delegate; the odd one is left duplicated.
        "partial_consolidation": [read, write(partial), done],
        # Each function delegates to its own private copy of the same body.
        "renamed_copies": [read, write(renamed_copies), done],
    }
    return TaskInstance(
        prompt=prompt,
        files=files,
        tools=("fs_list", "fs_read", "fs_write", "fs_edit", "run_tests"),
        expected={
            "module": f"{module}.py",
            "tests": f"test_{module}.py",
            "functions": names,
            "odd": names[odd],
            "quirk": quirk,
            "inputs": inputs,
            "outputs": outputs,
        },
        reference=reference,
        near_misses=near_misses,
    )


# --------------------------------------------------------------------------- the checker

class _Reads(dict):
    """A row that notes the keys the code reads of it."""

    def __init__(self, row: dict, read: set) -> None:
        super().__init__(row)
        self.read = read

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)


def _held_out(exp: dict, original: str) -> list[tuple[str, list | probe.OnePass, str, bool]]:
    """The held-out calls (function, argument, what the original returns, whether its trace counts for the
    trace rule): every input of ``exp``; per function, rows it skips (found by running the original: one
    row alone gives what no row gives, its status any string of the module) stripped to the keys the original
    reads of them, among rows it keeps; and each call again with a one-pass iterator of its rows, where the
    original gives the same on it (it does, iterating once: see the tests)."""
    namespace: dict = {}
    exec(compile(original, exp["module"], "exec"), namespace)  # the task's own code
    strings = sorted({c.value for c in ast.walk(pysource.parse(original)) if isinstance(c, ast.Constant)
                      and isinstance(c.value, str) and c.value.isidentifier()})
    kept = exp["inputs"][-1]
    cases = [(name, rows, want, True) for name, wants in exp["outputs"].items()
             for rows, want in zip(exp["inputs"], wants)]
    for name in exp["outputs"]:
        fn = namespace[name]
        rows = [{"id": f"S-{i}", "amount": a, "status": s} for i, (s, a) in enumerate(
            (s, a) for s in strings for a in (0.0, 1.5))]
        skipped = [r for r in rows if fn([r]) == fn([])]
        reads = [_Reads(r, set()) for r in skipped]
        fn(_mixed(reads, kept))
        stripped: dict[frozenset, dict] = {}
        for r in reads:
            stripped.setdefault(frozenset(r.read), {k: v for k, v in r.items() if k in r.read})
        mixed = _mixed(list(stripped.values()), kept)
        cases.append((name, mixed, fn(mixed), False))
    return cases + [(name, probe.OnePass(rows), want, False) for name, rows, want, _ in cases
                    if namespace[name](iter(rows)) == want]


def _mixed(rows: list, kept: list) -> list:
    """``rows`` among the ``kept`` ones, one by one."""
    return [r for pair in itertools.zip_longest(rows, kept) for r in pair if r is not None]


def _behaviour_changes(root, exp: dict, original: str) -> tuple[list[str], dict[str, frozenset[probe.Site] | str]]:
    """Held-out cases where a function's output differs from what it returned before, and what each of the
    three executed on the inputs of ``exp`` (every instruction, traced in the sandbox; a string when the trace
    was cut off)."""
    module = exp["module"][:-3]
    cases = _held_out(exp, original)
    bad = []
    executed: dict[str, frozenset[probe.Site] | str] = {name: frozenset() for name in exp["outputs"]}
    traced = probe.trace_all(root, [(module, name, [rows]) for name, rows, _, _ in cases])
    for (name, rows, want, counts), one in zip(cases, traced):
        got = one.outcome
        shown = f"iter({rows.items!r})" if isinstance(rows, probe.OnePass) else repr(rows)
        if got.kind == "missing":
            bad.append(f"{name} is gone from {exp['module']}")
        elif got.kind == "raised":
            bad.append(f"{name}({shown}) raised {got.error}")
        elif type(got.value) is not str or got.value != want:
            bad.append(f"{name}({shown}) returned {got.value!r}, it used to return {want!r}")
        if counts and not isinstance(so_far := executed[name], str):
            executed[name] = one.cut if one.sites is None else so_far | one.sites
    return bad, executed


#: The trace rule: a function of the three that executes, on the held-out inputs, this share of the places
#: of its original body (:func:`probe.places`) at places neither other one executes keeps its own copy,
#: however written or reached (a branch, dict, class, module, ``exec``'d string, one long line). Measured at
#: seeds 0-11 and 62: an original body has 30-35 places; the correct refactors of the corpora run 0-11 of
#: their own (the delegate's call, the odd one's quirk), every moved copy, restructured or not, 33 or more.
_OWN_SHARE = 0.6


def _own_copy(executed: dict[str, frozenset[probe.Site]], original: str) -> str | None:
    """A function of the three that runs its own copy of the duplicated body (see :data:`_OWN_SHARE`)."""
    body = min(probe.places(c) for c in compile(original, "original.py", "exec").co_consts if hasattr(c, "co_lines"))
    for name, sites in executed.items():
        own = sites - frozenset().union(*(s for n, s in executed.items() if n != name))
        if len(own) >= _OWN_SHARE * body:
            where = sorted((s.filename.rsplit("/", 1)[-1], s.qualname, s.line) for s in own if s.line > 0)
            return (f"{name} runs its own copy of the duplicated body: it executes {len(own)} places that neither "
                    f"of the other two executes (its original body has {body}), e.g. {where[0][1]} in {where[0][0]}, "
                    f"lines {where[0][2]}-{max(w[2] for w in where)}; the duplicated body is still there")
    return None


def _size(node: ast.AST) -> int:
    return sum(1 for _ in ast.walk(node))


#: The blocks of code the copy rule compares: functions, lambdas, loops and comprehensions, and (as
#: statement lists) every branch: the bodies of ``if``, ``else``, ``with``, ``try``, ``except``, ``case``.
_BLOCKS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.For, ast.AsyncFor, ast.While,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: Two blocks whose shapes agree this much (difflib's ratio of their node sequences) are copies. Measured
#: at seeds 0-11 (every quirk): the moved copies of tests/moved_copies.py agree at 0.86 or more; the
#: correct refactors of the corpora (reference and ~30 others, seeds 0-15) hold no two disjoint blocks
#: above the thin bar at all.
_ALIKE = 0.8
#: How many blocks and strings a workspace may hold before the rule stops comparing (a hostile workspace).
_MAX_BLOCKS = 200
#: How much comparing a workspace may cost (the sum of the products of the lengths of the shapes compared in
#: full, about 3 million a second here): a correct refactor costs a few thousand; a workspace of hundreds of
#: near-alike blocks fails rather than stall the checker.
_BUDGET = 15_000_000


def _shape(nodes: list[ast.AST]) -> list[str]:
    """The structure of a block, names normalised: its nodes in pre-order, each as its kind only (names,
    arguments, attributes and constants all alike), docstrings and load/store contexts left out."""
    out: list[str] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.expr_context) or (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            continue
        out.append(type(node).__name__)
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return out


def _code_in_strings(tree: ast.AST) -> list[tuple[int, ast.Module]]:
    """The string constants of ``tree`` that hold Python statements (code kept for ``exec``), parsed; a
    ``str.format`` or ``%`` template is read with its placeholders as names."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value):
            continue
        text = textwrap.dedent(node.value)
        for attempt in (text, re.sub(r"\{(\w*)[^{}]*\}", lambda m: m[1] or "_", text.replace("{{", "(").replace("}}", ")")),
                        re.sub(r"%\(?\w*\)?[sdrf]", "_", text)):
            try:
                sub = pysource.parse(attempt)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            if any(not isinstance(s, ast.Expr) for s in sub.body):
                out.append((node.lineno, sub))
            break
    return out


def _blocks(trees: dict[str, ast.Module], least: int) -> list[tuple[str, list[ast.AST], set[int]]]:
    """Every block of at least ``least`` syntax nodes, in the files and in the code their strings hold:
    (where, its nodes, the ids of every node inside it)."""
    sources: list[tuple[str, ast.Module]] = []
    pending = list(trees.items())
    while pending and len(sources) < _MAX_BLOCKS:
        where, tree = pending.pop(0)
        sources.append((where, tree))
        pending += [(f"{where}: the code in the string at line {line}", sub) for line, sub in _code_in_strings(tree)]
    out = []
    for where, tree in sources:
        for node in ast.walk(tree):
            groups = [[node]] if isinstance(node, _BLOCKS) else [] if isinstance(node, (ast.Module, ast.ClassDef)) else [
                getattr(node, field) for field in ("body", "orelse", "finalbody")
                if isinstance(getattr(node, field, None), list)]
            for group in groups:
                if group and sum(_size(n) for n in group) >= least:
                    name = (getattr(node, "name", None) if group[0] is node else None) or (
                        f"{type(node).__name__.lower()} at line {node.lineno}" if group[0] is node
                        else f"the branch at line {group[0].lineno}")
                    out.append((f"{where}:{name}", group, {id(n) for g in group for n in ast.walk(g)}))
                    if len(out) > _MAX_BLOCKS:
                        raise AssertionError(f"the workspace holds more than {_MAX_BLOCKS} blocks of code to compare")
    return out


def _copies(trees: dict[str, ast.Module], least: int) -> tuple[str, str, float] | None:
    """Two blocks of the workspace, neither inside the other, that keep one shape once names are
    normalised (see :data:`_ALIKE`), or None."""
    blocks = [(where, _shape(nodes), inside, nodes) for where, nodes, inside in _blocks(trees, least)]
    spent = 0
    for i, (where_a, shape_a, inside_a, nodes_a) in enumerate(blocks):
        for where_b, shape_b, inside_b, nodes_b in blocks[i + 1:]:
            if any(id(n) in inside_a for n in nodes_b) or any(id(n) in inside_b for n in nodes_a):
                continue
            matcher = difflib.SequenceMatcher(None, shape_a, shape_b, autojunk=False)
            if matcher.real_quick_ratio() < _ALIKE or matcher.quick_ratio() < _ALIKE:
                continue
            spent += len(shape_a) * len(shape_b)
            if spent > _BUDGET:
                raise AssertionError("the workspace holds too many blocks of code alike in their parts to compare "
                                     f"(more than {_BUDGET:,} steps)")
            if (ratio := matcher.ratio()) >= _ALIKE:
                return where_a, where_b, ratio
    return None


def _referenced(node: ast.AST) -> set[str]:
    """Names and attribute names a function body or expression refers to."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.add(sub.attr)
    return out


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept when behaviour is kept and the three functions share one helper, with no copies left."""
    assert run.workspace is not None, "the run has no workspace"
    exp = instance.expected
    ws = Workspace(run.workspace)
    now = ws.snapshot()
    test_path = exp["tests"]
    assert now.get(test_path) == instance.files[test_path].encode(), f"{test_path} was modified"
    assert exp["module"] in now, f"{exp['module']} is gone"

    # parse every Python source of the workspace except tests
    trees: dict[str, ast.Module] = {}
    for path, data in sorted(now.items()):
        name = path.rsplit("/", 1)[-1]
        if not path.endswith(".py") or name.startswith("test_") or name == "conftest.py":
            continue
        try:
            trees[path] = pysource.parse(data.decode("utf-8", errors="replace"), filename=path)
        except SyntaxError as exc:
            raise AssertionError(f"{path} does not parse: {exc}") from None
    main = trees[exp["module"]]

    # behaviour: the three functions give the outputs they gave before, on held-out inputs
    original = instance.files[exp["module"]]
    assert isinstance(original, str), f"{exp['module']} of the task's own files is not text"
    problems, executed = _behaviour_changes(run.workspace, exp, original)
    assert not problems, f"behaviour changed in {len(problems)} held-out case(s), e.g. {problems[0][:300]}"

    # what is defined where
    defined: set[str] = set()
    for path, tree in trees.items():
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            if isinstance(node, ast.ClassDef):
                defined.update(n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
            elif isinstance(node, ast.Assign):
                defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    # "from report_core import build_report as _build": the alias names a helper of the workspace too
    defined |= {a.asname for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                for a in n.names if a.asname and a.name in defined - set(exp["functions"])}

    # the three public functions, and what each refers to
    originals = {n.name: n for n in pysource.parse(instance.files[exp["module"]]).body
                 if isinstance(n, ast.FunctionDef)}
    uses: dict[str, set[str]] = {}
    for name in exp["functions"]:
        node = next((n for n in main.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
                    None)
        if node is not None:
            size, limit = _size(node), _size(originals[name]) // 2
            assert size <= limit, (
                f"{name} still holds its own logic ({size} syntax nodes, was {_size(originals[name])}); "
                "it should delegate to the shared helper")
            uses[name] = _referenced(node) - {name}
            continue
        assign = next((n for n in main.body if isinstance(n, ast.Assign)
                       and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)), None)
        assert assign is not None, f"{name} is no longer defined in {exp['module']}"
        uses[name] = _referenced(assign.value)
    shared = set.intersection(*uses.values()) & defined - set(exp["functions"])
    if not shared:
        lonely = [n for n in exp["functions"] if not (uses[n] & defined - set(exp["functions"]))]
        raise AssertionError(
            "the three functions do not use one shared helper"
            + (f" ({', '.join(lonely)} uses no helper of the workspace)" if lonely else
               f" (each uses its own: {', '.join(f'{n}: {sorted(uses[n] & defined)}' for n in exp['functions'])})"))

    # no two blocks anywhere in the workspace (functions, branches, loops, nested functions, lambdas,
    # code in strings, other modules) keep one shape: a copy moved into a branch is still a copy. Blocks as
    # thin as the three must be may be alike (typed, keyword-argument delegates of the two plain functions are).
    thin = max(25, min(_size(originals[name]) // 2 for name in exp["functions"]) + 1)
    pair = _copies(trees, thin)
    assert pair is None, (
        f"{pair[0]} and {pair[1]} keep the shape of one body ({pair[2]:.0%} alike once names are normalised): "
        "the duplicated body is still there twice")
    # ... and, executed: each of the three runs mostly the places the other two run, not a body of its own
    cut = [f"{name} ({sites})" for name, sites in executed.items() if isinstance(sites, str)]
    assert not cut, f"what the three functions execute could not be traced: {cut[0]}"
    own = _own_copy({name: sites for name, sites in executed.items() if not isinstance(sites, str)}, original)
    assert own is None, own
    assert run.final_answer and run.final_answer.strip(), "no summary was given"


@task("task_02", "refactor_duplicated_code", build=build, limits={"max_turns": 14},
      runs_model_code=True)
def test_refactor_duplicated_code(agent):
    """Three near-identical functions; consolidate into one shared abstraction, behaviour unchanged."""
    run = agent.run()
    check(agent.instance, run)
