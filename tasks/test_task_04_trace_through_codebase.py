"""task_04 trace_through_codebase: follow a call chain across files, report the value and the function.

Measures whether a model traces code instead of guessing from names. A
small package computes a shipping fee through five files: the API calls an
order builder (catalogue lookups), then a quote function that dispatches by
mode through a table of aliased imports. A module named after the requested
mode exists but is never imported; the rates module patches its own table
after defining it. The checker accepts the returned value (integer cents) and
the function that computes it (module and function); it rejects one of the
other same-named functions and the value another function would return.

Two layouts (families), drawn per seed apart from the values (:func:`layout`): the strategies are
modules (``shop/shipping/banded.py``) or packages, each its ``fee`` in an ``__init__.py``
(``shop/shipping/banded/__init__.py``), so that a correct answer may name a function in an
``__init__.py`` (issue 33): one path is one candidate, at any depth, and the dispatcher in
``shop/shipping/__init__.py:quote`` is the wrong function, not a second candidate.

Answer contract (revision 5, in the prompt): the reply ends with the lines
``VALUE: <integer cents>`` and ``FUNCTION: <path/to/module.py:function>``, and only those
lines are judged (``pytest_agentic.run.answerlines``, its form and hedge rules): the value
(``1,790`` and ``1790 cents`` read as 1790) must be what the call returns, the function the one
that computes it (also read when written ``pkg/shipping/banded.py::fee``, ``pkg.shipping.banded.fee``,
``fee(order)``, with backslashes or without leading folders). Each line holds its value alone: a note
on it (in brackets, after a dash, alone in brackets under it, a footnote, other words:
``1490 (four thousand four hundred if ...)``) fails as ``answer_format``, whatever it says. The rest
of the reply is free: above the lines, other functions and values named to rule them out, the tariff
tables quoted. A second number or a second function on the two lines is a hedge: a function is named
there by its module and name in any of those spellings, or by its module's file (``standard.py``).
A missing line fails as ``answer_format``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run import answerlines

_PACKAGES = ["shop", "store", "market", "outlet", "bazaar", "emporium"]
_MODES = ["standard", "express", "economy", "priority"]
_TIERED = ["tiered", "banded", "weighted"]
_FLAT = ["flat", "fixed", "uniform"]
_REGIONS = ["north", "south", "east", "west", "central", "coast"]
_SKUS = ["mug", "lamp", "rug", "chair", "kettle", "vase", "clock", "shelf", "stool", "mirror"]


def layout(seed: int) -> str:
    """The seed's family: the strategies as ``modules`` (``banded.py``) or ``packages`` (``banded/__init__.py``),
    drawn apart from the values, so that a seed's figures do not depend on it."""
    return random.Random(f"task_04:{seed}:layout").choice(["modules", "packages"])


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_04:{seed}")
    packaged = layout(seed) == "packages"
    pkg = rng.choice(_PACKAGES)
    mode_a, mode_b = rng.sample(_MODES, 2)  # mode_a -> tiered strategy, mode_b -> flat strategy
    tiered, flat = rng.choice(_TIERED), rng.choice(_FLAT)
    regions = rng.sample(_REGIONS, 4)
    region = rng.choice(regions)
    asked = rng.choice([mode_a, mode_b])
    target_mod = tiered if asked == mode_a else flat
    other_mod = flat if asked == mode_a else tiered
    decoy_mod = asked  # shipping/<asked>.py: named after the mode, never imported

    for _attempt in range(100):
        skus = rng.sample(_SKUS, 6)
        prices = {s: rng.randint(4, 90) * 100 + rng.choice([0, 49, 99]) for s in skus}
        weights = {s: rng.randint(2, 60) * 50 for s in skus}
        cart = [(s, rng.randint(1, 3)) for s in rng.sample(skus, rng.randint(2, 3))]
        subtotal = sum(prices[s] * q for s, q in cart)
        weight = sum(weights[s] * q for s, q in cart)
        bands = [(500, rng.randint(3, 5) * 100 - 1), (2000, rng.randint(6, 9) * 100 - 1),
                 (5000, rng.randint(11, 15) * 100 - 1), (20000, rng.randint(20, 29) * 100 - 1)]
        factor = {r: rng.randint(1, 4) for r in regions}
        flat_rate = {r: rng.randint(3, 12) * 100 + 90 for r in regions}
        free_above = subtotal + rng.randint(5, 40) * 100
        base_fee, per_kg = rng.randint(2, 6) * 100, rng.randint(1, 4) * 100 + 50
        patched = rng.random() < 0.5  # does the patch line hit the asked region?
        patch_region = region if patched else rng.choice([r for r in regions if r != region])
        patch_value = {"tiered": rng.choice([f for f in range(2, 6) if f != factor[patch_region]]),
                       "flat": rng.randint(13, 19) * 100 + 90}
        eff_factor = dict(factor)
        eff_flat = dict(flat_rate)
        eff_factor[patch_region] = patch_value["tiered"]
        eff_flat[patch_region] = patch_value["flat"]
        base = next((c for limit, c in bands if weight <= limit), bands[-1][1])
        tiered_value = base * eff_factor[region]
        flat_value = 0 if subtotal >= free_above else eff_flat[region]
        decoy_value = base_fee + per_kg * -(-weight // 1000)
        target = tiered_value if target_mod == tiered else flat_value
        other = flat_value if target_mod == tiered else tiered_value
        unpatched = (base * factor[region]) if target_mod == tiered else flat_rate[region]
        # numbers a correct explanation may cite: none of them may equal a wrong function's value
        cited = ({subtotal, weight, unpatched} | {q for _, q in cart}
                 | {prices[s] for s, _ in cart} | {weights[s] for s, _ in cart}
                 | {prices[s] * q for s, q in cart} | {weights[s] * q for s, q in cart})
        if target_mod == tiered:
            cited |= {x for band in bands for x in band} | {base, factor[region], eff_factor[region]}
        else:
            cited |= {free_above, flat_rate[region], eff_flat[region]}
        if (len({target, other, decoy_value}) == 3 and min(target, other, decoy_value) >= 100
                and not {other, decoy_value} & cited
                and (not patched or unpatched != target)):
            break
    else:  # pragma: no cover - the loop always finds one in practice
        raise RuntimeError("no distinct instance found")

    def where(module: str) -> str:
        """The file that holds a strategy's ``fee``: its module, or its package's ``__init__.py``."""
        return f"{pkg}/shipping/{module}/__init__.py" if packaged else f"{pkg}/shipping/{module}.py"

    parent = ".." if packaged else "."  # then ".rates": the package above shipping/, from a strategy

    def tbl(d: dict) -> str:
        return "{\n" + "".join(f"    {k!r}: {v},\n" for k, v in d.items()) + "}"

    files = {
        f"{pkg}/__init__.py": f'"""{pkg}: the storefront back end."""\n',
        f"{pkg}/api.py": (
            '"""Entry points called by the web front end."""\n\n'
            "from .orders import build_order\n"
            "from .shipping import quote\n\n\n"
            f'def checkout(items, region, mode="{mode_a}"):\n'
            '    """Shipping fee, in cents, for a cart of (sku, quantity) pairs sent to ``region``."""\n'
            "    order = build_order(items, region)\n"
            "    return quote(order, mode)\n"
        ),
        f"{pkg}/orders.py": (
            '"""Orders: a cart turned into what pricing needs."""\n\n'
            "from .catalog import PRICES, WEIGHTS\n\n\n"
            "def build_order(items, region):\n"
            '    """Subtotal in cents and weight in grams of a cart."""\n'
            "    subtotal = sum(PRICES[sku] * qty for sku, qty in items)\n"
            "    weight = sum(WEIGHTS[sku] * qty for sku, qty in items)\n"
            '    return {"region": region, "subtotal": subtotal, "weight": weight}\n'
        ),
        f"{pkg}/catalog.py": (
            '"""The catalogue: prices in cents, weights in grams."""\n\n'
            f"PRICES = {tbl(prices)}\n\nWEIGHTS = {tbl(weights)}\n"
        ),
        f"{pkg}/rates.py": (
            '"""Shipping tariffs."""\n\n'
            "# (max weight in grams, fee in cents), lightest first\n"
            f"WEIGHT_BANDS = {bands!r}\n\n"
            f"REGION_FACTOR = {tbl(factor)}\n\n"
            f"FLAT_RATE = {tbl(flat_rate)}\n\n"
            f"FREE_SHIPPING_ABOVE = {free_above}\n\n"
            f"BASE_FEE = {base_fee}\nPER_KG = {per_kg}\n\n"
            "# Tariff update, effective 1 March.\n"
            f'REGION_FACTOR["{patch_region}"] = {patch_value["tiered"]}\n'
            f'FLAT_RATE["{patch_region}"] = {patch_value["flat"]}\n'
        ),
        f"{pkg}/shipping/__init__.py": (
            '"""Shipping quotes: one pricing strategy per delivery mode."""\n\n'
            f"from .{tiered} import fee as _by_weight\n"
            f"from .{flat} import fee as _by_region\n\n"
            f'_STRATEGIES = {{"{mode_a}": _by_weight, "{mode_b}": _by_region}}\n\n\n'
            "def quote(order, mode):\n"
            '    """The shipping fee in cents for an order and a delivery mode."""\n'
            "    return _STRATEGIES[mode](order)\n"
        ),
        where(tiered): (
            '"""Fees by weight band, scaled by region."""\n\n'
            f"from {parent}.rates import REGION_FACTOR, WEIGHT_BANDS\n\n\n"
            "def fee(order):\n"
            "    for limit, cents in WEIGHT_BANDS:\n"
            '        if order["weight"] <= limit:\n'
            "            base = cents\n"
            "            break\n"
            "    else:\n"
            "        base = WEIGHT_BANDS[-1][1]\n"
            '    return base * REGION_FACTOR[order["region"]]\n'
        ),
        where(flat): (
            '"""One fee per region; free above a subtotal."""\n\n'
            f"from {parent}.rates import FLAT_RATE, FREE_SHIPPING_ABOVE\n\n\n"
            "def fee(order):\n"
            '    if order["subtotal"] >= FREE_SHIPPING_ABOVE:\n'
            "        return 0\n"
            '    return FLAT_RATE[order["region"]]\n'
        ),
        where(decoy_mod): (
            f'"""{decoy_mod.capitalize()} delivery fees."""\n\n'
            f"from {parent}.rates import BASE_FEE, PER_KG\n\n\n"
            "def fee(order):\n"
            '    """A base fee plus a charge per started kilogram."""\n'
            '    kilos = -(-order["weight"] // 1000)\n'
            "    return BASE_FEE + PER_KG * kilos\n"
        ),
    }
    cart_text = repr(cart)
    prompt = (
        f"In the `{pkg}` package, what does `{pkg}.api.checkout({cart_text}, \"{region}\", mode=\"{asked}\")` "
        "return, and which function computes that number? Trace the code; do not guess from names. "
        "Reply with the value (an integer number of cents) and exactly one function, written as "
        "`path/to/module.py:function`. End your reply with the two lines `VALUE: <cents>` and "
        "`FUNCTION: <path/to/module.py:function>`; name no other number, function or module on those two lines. "
        + answerlines.ALONE
    )
    target_path = where(target_mod)
    reads = [ToolCall("fs_read", {"path": p}) for p in (
        f"{pkg}/api.py", f"{pkg}/orders.py", f"{pkg}/catalog.py", f"{pkg}/shipping/__init__.py", target_path,
        f"{pkg}/rates.py")]
    reference = [
        ToolCall("fs_list", {"path": pkg}),
        reads[:3],
        reads[3],
        reads[4:],
        Final(f"`checkout` returns {target}. The fee is computed by `{target_path}:fee`: the mode "
              f"\"{asked}\" maps to it in shipping/__init__.py; subtotal {subtotal}, weight {weight} g, "
              f"region {region}.\n\nVALUE: {target}\nFUNCTION: {target_path}:fee"),
    ]
    near_misses = {
        # Trusts the file named after the mode, which nothing imports.
        "module_named_after_mode": [
            ToolCall("fs_list", {"path": pkg}),
            ToolCall("fs_read", {"path": where(decoy_mod)}),
            Final(f"It returns {decoy_value}, computed by {where(decoy_mod)}:fee.\n\n"
                  f"VALUE: {decoy_value}\nFUNCTION: {where(decoy_mod)}:fee"),
        ],
        # Swaps the two entries of the dispatch table.
        "other_strategy": [
            reads[3],
            Final(f"It returns {other}, computed by {where(other_mod)}:fee.\n\n"
                  f"VALUE: {other}\nFUNCTION: {where(other_mod)}:fee"),
        ],
        # Right function and value, hedged with a second candidate.
        "hedged": [
            *reference[:-1],
            Final(f"Either {target_path}:fee ({target}) or {where(decoy_mod)}:fee ({decoy_value}).\n\n"
                  f"VALUE: {target}\nFUNCTION: {target_path}:fee or {where(decoy_mod)}:fee"),
        ],
    }
    if patched:
        # Right function, but the value read from the table before the tariff update.
        near_misses["missed_tariff_update"] = [
            *reference[:-1],
            Final(f"It returns {unpatched}, computed by `{target_path}:fee`.\n\n"
                  f"VALUE: {unpatched}\nFUNCTION: `{target_path}:fee`"),
        ]
    if not patched or packaged:
        # Right value, but credits the dispatcher rather than the function that computes it (in the packages'
        # layout both are in an __init__.py: one path each, the wrong function, not a hedge).
        near_misses["names_the_dispatcher"] = [
            *reference[:-1],
            Final(f"It returns {target}, computed by {pkg}/shipping/__init__.py:quote.\n\n"
                  f"VALUE: {target}\nFUNCTION: {pkg}/shipping/__init__.py:quote"),
        ]
    return TaskInstance(
        prompt=prompt,
        files=files,
        tools=("fs_list", "fs_read"),
        expected={
            "value": target,
            "module": target_mod,
            "function": f"{target_path}:fee",
            "package": pkg,
            "decoy_modules": sorted({other_mod, decoy_mod}),
            "decoy_values": sorted({other, decoy_value}),
            "call": {"items": cart, "region": region, "mode": asked},
        },
        reference=reference,
        near_misses=near_misses,
    )


#: A function as ``path/to/module.py:function`` (also ``::``, dots or backslashes for slashes): (module path, name).
#: A path starts nowhere a path or a colon precedes: ``a/b.py:c/d.py:fee`` (two modules chained before one
#: function, a player's hack) reads as no function, not as its tail ``c/d.py:fee``.
_FUNCTION = re.compile(r"(?<![\w./\\:])((?:\.[/\\])?[a-z_][\w]*(?:[/\\.][a-z_]\w*)*?)(\.py)?(?:::?|\.)([a-z_]\w*)"
                       r"(?:\(\))?(?![\w./\\])", re.IGNORECASE)
#: A module and a function in a looser spelling: ``standard.fee``, ``standard.py::fee``.
_LOOSE = re.compile(r"\b(\w+)(?:\.py)?(?:::?|\.)(\w+)\b")
#: A module's file named alone: ``standard.py``, ``pkg/shipping/standard.py``.
_FILE = re.compile(r"(?<![\w./\\])((?:\.[/\\])?[a-z_]\w*(?:[/\\][a-z_]\w*)*)\.py(?![\w/\\]|:)", re.IGNORECASE)


def _functions(value: str) -> list[tuple[str, tuple[int, int]]]:
    """The functions a text names, each as ``pkg/shipping/banded.py:fee`` (lower case), with where it is written.
    One path is one function at any depth: ``pkg/shipping/__init__.py:quote`` names no ``__init__.py:quote``."""
    out = []
    for m in _FUNCTION.finditer(value.replace("\\", "/")):
        module = re.sub(r"^\./", "", m.group(1)).replace(".", "/")
        if ("/" in module or m.group(2)) and m.group(3) != "py":  # a module, not a lone word or a file name
            out.append((f"{module}.py:{m.group(3)}".lower(), m.span()))
    return out


def functions(value: str) -> list[str]:
    """The functions a ``FUNCTION:`` value names, each as ``pkg/shipping/banded.py:fee`` (lower case)."""
    return [f for f, _ in _functions(value)]


def _resolver(files: Iterable[str]) -> Callable[[str], str]:
    """The full path of a function named by a path that may leave out leading folders (``shipping/banded.py:fee``
    is ``shop/shipping/banded.py:fee`` when that file is the only one it can be); else the name as given."""
    modules = [p.lower() for p in files if p.endswith(".py")]

    def full(function: str) -> str:
        module, _, name = function.rpartition(":")
        for path in (module, module[:-3] + "/__init__.py"):  # pkg.shipping.banded.fee: a package's __init__.py
            found = [m for m in modules if m == path or m.endswith("/" + path)]
            if found:
                return f"{found[0]}:{name}" if len(found) == 1 else function
        return function
    return full


def parsers(instance: TaskInstance) -> tuple[answerlines.Parser, answerlines.Parser]:
    """What a ``FUNCTION:`` value offers (its functions, full paths) and what a judged line names of functions:
    those, the package's modules named with a function in a looser spelling (``standard.fee``), and its
    modules' files named alone (``standard.py``, read as that module's ``fee``)."""
    full = _resolver(instance.files)
    stems = {p.rsplit("/", 1)[-1][:-3].lower() for p in instance.files if p.endswith(".py")}
    stems |= {p.split("/")[-2].lower() for p in instance.files  # a strategy package's name
              if p.endswith("/__init__.py") and "/shipping/" in p}

    def candidates(value: str) -> list[str]:
        return [full(f) for f in functions(value)]

    def mentions(text: str) -> list[str]:
        text = text.replace("\\", "/")
        named = _functions(text)
        out = [full(f) for f, _ in named]
        for _, (start, end) in reversed(named):  # a path read whole is not read again in part
            text = text[:start] + " " + text[end:]
        out += [full(f"{m[1].lower()}.py:{m[2].lower()}") for m in _LOOSE.finditer(text)
                if m[1].lower() in stems and m[2].lower() != "py"]
        out += [full(f"{re.sub(r'^[.]/', '', m[1]).lower()}.py:fee") for m in _FILE.finditer(text)
                if m[1].rsplit("/", 1)[-1].lower() in stems]
        return out
    return candidates, mentions


#: The lines' values as written: cents (``1,790``, ``1790 cents``); one function, its argument list glued
#: (``fee(order)``).
_VALUE = rf"{answerlines.INTEGER}(?:\s*(?:cents?|\u00a2))?"
_FUNCTION_FORM = _FUNCTION.pattern + r"(?:\([\w\s,]*\))?"


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept a reply whose ``VALUE:`` and ``FUNCTION:`` lines give the returned value and the one function."""
    exp = instance.expected
    functions_in, named = parsers(instance)
    value, function = answerlines.sheet(
        run.final_answer or "",
        answerlines.Field("value", "VALUE:", answerlines.integers, form=_VALUE),
        answerlines.Field("function", "FUNCTION:", functions_in, mentions=named, form=_FUNCTION_FORM))
    right = exp["function"]
    decoys = {f"{exp['package']}/shipping/{m}.py" for m in exp["decoy_modules"]}
    decoys |= {f"{exp['package']}/shipping/{m}/__init__.py" for m in exp["decoy_modules"]}
    assert right == function, (
        f"the FUNCTION: line names {function}, " + (
            "which does not compute this fee" if function.split(":")[0] in decoys
            else "the dispatcher, which does not compute this fee" if function.endswith(":quote")
            else f"not {right}"))
    assert value == exp["value"], (
        f"the VALUE: line gives {value}"
        + (", what another function would return" if value in exp["decoy_values"] else "")
        + f", not the returned value")


@task("task_04", "trace_through_codebase", build=build, limits={"max_turns": 14})
def test_trace_through_codebase(agent):
    """Follow a call chain across several files; report the value and the function that computes it."""
    run = agent.run()
    check(agent.instance, run)
