"""task_04 trace_through_codebase: follow a call chain across files, report the value and the function.

Measures whether a model traces code instead of guessing from names. A
small package computes a shipping fee through five files: the API calls an
order builder (catalogue lookups), then a quote function that dispatches by
mode through a table of aliased imports. A module named after the requested
mode exists but is never imported; the rates module patches its own table
after defining it. The checker accepts a free-text answer that gives the
returned value (integer cents) and names the function that computes it
(module and function); it rejects answers that name one of the other
same-named functions or give the value another function would return.

Answer contract (in the prompt): the returned value in integer cents (digit
grouping allowed) and the one function that computes it (module and
function); no other strategy module named; another function's value may be
ruled out ("not 990") but not given as the answer, nor any other value offered as
an alternative ("or possibly 4297") or stated as the result ("Final answer: 4447").
"""

from __future__ import annotations

import random
import re

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run.answers import alternatives, final_claim, markup_removed, mentions, outside_code

_PACKAGES = ["shop", "store", "market", "outlet", "bazaar", "emporium"]
_MODES = ["standard", "express", "economy", "priority"]
_TIERED = ["tiered", "banded", "weighted"]
_FLAT = ["flat", "fixed", "uniform"]
_REGIONS = ["north", "south", "east", "west", "central", "coast"]
_SKUS = ["mug", "lamp", "rug", "chair", "kettle", "vase", "clock", "shelf", "stool", "mirror"]


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_04:{seed}")
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
        f"{pkg}/shipping/{tiered}.py": (
            '"""Fees by weight band, scaled by region."""\n\n'
            "from ..rates import REGION_FACTOR, WEIGHT_BANDS\n\n\n"
            "def fee(order):\n"
            "    for limit, cents in WEIGHT_BANDS:\n"
            '        if order["weight"] <= limit:\n'
            "            base = cents\n"
            "            break\n"
            "    else:\n"
            "        base = WEIGHT_BANDS[-1][1]\n"
            '    return base * REGION_FACTOR[order["region"]]\n'
        ),
        f"{pkg}/shipping/{flat}.py": (
            '"""One fee per region; free above a subtotal."""\n\n'
            "from ..rates import FLAT_RATE, FREE_SHIPPING_ABOVE\n\n\n"
            "def fee(order):\n"
            '    if order["subtotal"] >= FREE_SHIPPING_ABOVE:\n'
            "        return 0\n"
            '    return FLAT_RATE[order["region"]]\n'
        ),
        f"{pkg}/shipping/{decoy_mod}.py": (
            f'"""{decoy_mod.capitalize()} delivery fees."""\n\n'
            "from ..rates import BASE_FEE, PER_KG\n\n\n"
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
        "`path/to/module.py:function`; mention no other function or module."
    )
    target_path = f"{pkg}/shipping/{target_mod}.py"
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
              f"region {region}."),
    ]
    near_misses = {
        # Trusts the file named after the mode, which nothing imports.
        "module_named_after_mode": [
            ToolCall("fs_list", {"path": pkg}),
            ToolCall("fs_read", {"path": f"{pkg}/shipping/{decoy_mod}.py"}),
            Final(f"It returns {decoy_value}, computed by {pkg}/shipping/{decoy_mod}.py:fee."),
        ],
        # Swaps the two entries of the dispatch table.
        "other_strategy": [
            reads[3],
            Final(f"It returns {other}, computed by {pkg}/shipping/{other_mod}.py:fee."),
        ],
        # Right function and value, hedged with a second candidate.
        "hedged": [
            *reference[:-1],
            Final(f"Either {target_path}:fee ({target}) or {pkg}/shipping/{decoy_mod}.py:fee ({decoy_value})."),
        ],
    }
    if patched:
        # Right function, but the value read from the table before the tariff update.
        near_misses["missed_tariff_update"] = [
            *reference[:-1],
            Final(f"It returns {unpatched}, computed by `{target_path}:fee`."),
        ]
    else:
        # Right value, but credits the dispatcher rather than the function that computes it.
        near_misses["names_the_dispatcher"] = [
            *reference[:-1],
            Final(f"It returns {target}, computed by {pkg}/shipping/__init__.py:quote."),
        ]
    return TaskInstance(
        prompt=prompt,
        files=files,
        tools=("fs_list", "fs_read"),
        expected={
            "value": target,
            "module": target_mod,
            "package": pkg,
            "decoy_modules": sorted({other_mod, decoy_mod}),
            "decoy_values": sorted({other, decoy_value}),
            "call": {"items": cart, "region": region, "mode": asked},
        },
        reference=reference,
        near_misses=near_misses,
    )


def _normalize(text: str) -> str:
    text = re.sub(r"[`'\"*]", " ", text.lower()).replace("\\", "/").replace("/", ".")
    return re.sub(r"(?<=\d)[,_](?=\d{3}\b)", "", text)


def _names_module(text: str, module: str) -> bool:
    m = re.escape(module)
    # "standard.py", "shipping.standard", "standard:fee"; not the mode's name in prose ('mode "standard": fee ...')
    return bool(re.search(rf"\b{m}\.py\b|\bshipping\.{m}\b|\b{m}[.:]fee\b", text))


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept an answer with the right value and the one right function, and no other candidate."""
    exp = instance.expected
    answer = final_claim(run.final_answer or "")  # what follows a reasoning block
    text = _normalize(markup_removed(answer))
    assert text.strip(), "no final answer was given (nothing after the reasoning)"
    values = {exp["value"], *exp["decoy_values"]}
    prose = outside_code(answer)  # code it quotes (a rates table) is evidence when the prose gives the value
    if any(m.value == exp["value"] and not m.rejected for m in mentions(prose, values, describing_words=False)):
        answer = prose
    found = mentions(answer, values, describing_words=False)
    integers = {m.value for m in found if not m.rejected}
    wrong_modules = [m for m in exp["decoy_modules"] if _names_module(text, m)]
    assert not wrong_modules, (
        f"the answer names {', '.join(f'shipping/{m}.py' for m in wrong_modules)}, which does not compute this fee")
    assert _names_module(text, exp["module"]), (
        "the answer does not name the function that computes the fee (module and function)")
    wrong_values = [v for v in exp["decoy_values"] if v in integers]
    assert not wrong_values, f"the answer gives {wrong_values}, what another function would return"
    assert exp["value"] in integers, (
        f"the answer does not give the returned value {exp['value']}"
        + (" (it names it only to set it aside)" if any(m.value == exp["value"] for m in found) else ""))
    # a second candidate value, offered ("or possibly 4297") or stated as the result ("Final answer: 4447")
    offered = alternatives(answer, exp["value"], 100)
    assert not offered, f"the answer also offers {offered} as the returned value"


@task("task_04", "trace_through_codebase", build=build, limits={"max_turns": 14})
def test_trace_through_codebase(agent):
    """Follow a call chain across several files; report the value and the function that computes it."""
    run = agent.run()
    check(agent.instance, run)
