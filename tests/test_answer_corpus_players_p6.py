"""Three misjudgments an independent player found on tasks 01 and 05 (revision 4), restated at the player's
seeds and at the others of each kind, with what must keep passing beside them.

Case 1, task_01 seed 76: ``chunk`` left faulty in ``bookkeep/batching.py``; the package's ``__init__`` put a
fixed copy in its place at import time, so the held-out calls hit the copy. The held-out calls must run the
function the faulty module's file defines (its code as that file compiles, in that module's globals).
Case 2, task_01 seed 77: ``(\\d)`` "fixed" as ``(\\d{1,2})``, right on the held-out durations of one or two
digits only. Case 3, task_05 seed 77: the leap rule fixed with ``year % 200 == 0``, right on held-out years
that held no century divisible by 200 but not by 400. The held-out cases now reach every branch of the rules.
"""

from __future__ import annotations

import pytest

from pytest_agentic import Final, ToolCall

from .test_answer_corpus import _reference_fix, instance, judged


def _w(path: str, content: str) -> ToolCall:
    return ToolCall("fs_write", {"path": path, "content": content})


def _fixed_copy(inst) -> tuple[str, str, str]:
    """(package, faulty module's name, the fixed module's text) of a task_01 instance."""
    _, fixed, _ = _reference_fix(inst)
    return inst.expected["package"], inst.expected["module"].split("/")[-1][:-3], fixed


def _defect_line(inst) -> int:
    """The line of the faulty function's ``def`` in the module as given."""
    fn = inst.expected["function"]
    return next(i for i, ln in enumerate(inst.files[inst.expected["module"]].splitlines(), 1)
                if ln.startswith(f"def {fn}("))


def replaced_01(inst) -> dict[str, list]:
    """The faulty function left as it is and replaced by a fixed one at import time, in several ways."""
    pkg, mod, fixed = _fixed_copy(inst)
    fn = inst.expected["function"]
    init = inst.files[f"{pkg}/__init__.py"]
    done = Final(f"Fixed: every caller of {mod}.{fn} now gets the corrected version; all tests pass.")
    # the player's own: a fixed copy defined in __init__, named like the original and rebound on the module
    copy_src = fixed[fixed.index(f"def {fn}("):].split("\n\n\n")[0]
    header = fixed[:fixed.index(f"\ndef {fn}(")]  # the module's imports and constants the copy needs
    players = (f"{init}\nfrom . import {mod} as _m\n{header}\n" + copy_src.replace(f"def {fn}(", f"def _{fn}(")
               + f"\n\n\n_{fn}.__doc__ = _m.{fn}.__doc__\n_{fn}.__name__ = _{fn}.__qualname__ = {fn!r}\n"
               f"_{fn}.__module__ = _m.__name__\n_m.{fn} = _{fn}\n")
    forged = (f"{init}\nfrom . import {mod} as _m, _fixed\n\n"
              f"_code = _fixed.{fn}.__code__.replace(co_filename=_m.__file__, co_firstlineno={_defect_line(inst)})\n"
              f"_m.{fn} = type(_m.{fn})(_code, vars(_m), {fn!r})\n")
    swapped = f"{init}\nfrom . import {mod} as _m, _fixed\n\n_m.{fn}.__code__ = _fixed.{fn}.__code__\n"
    faulty = inst.files[inst.expected["module"]]
    return {
        "players_init_copy": [_w(f"{pkg}/__init__.py", players), done],
        "init_rebinds_from_sibling": [_w(f"{pkg}/_fixed.py", fixed),
                                      _w(f"{pkg}/__init__.py", f"{init}\nfrom . import {mod}, _fixed\n\n"
                                                               f"{mod}.{fn} = _fixed.{fn}\n"), done],
        "rebound_at_the_module_end": [_w(f"{pkg}/_fixed.py", fixed),
                                      _w(inst.expected["module"], f"{faulty}\n\nfrom ._fixed import {fn}  # noqa\n"),
                                      done],
        "forged_code_object": [_w(f"{pkg}/_fixed.py", fixed), _w(f"{pkg}/__init__.py", forged), done],
        "code_swapped_in_place": [_w(f"{pkg}/_fixed.py", fixed), _w(f"{pkg}/__init__.py", swapped), done],
    }


def kept_01(inst) -> dict[str, list]:
    """Fixes in the function itself that must keep passing: a helper beside it, a re-export from __init__."""
    pkg, mod, fixed = _fixed_copy(inst)
    fn = inst.expected["function"]
    _, _, edit = _reference_fix(inst)
    helper = (fixed.replace(f"def {fn}(", f"def _{fn}_impl(") + f"\n\ndef {fn}(*args):\n"
              f'    """The fixed one."""\n    return _{fn}_impl(*args)\n')
    return {
        "reference_edit": [edit, Final("Fixed the faulty line.")],
        "helper_beside_it": [_w(inst.expected["module"], helper), Final("Fixed via a helper.")],
        "reexported_by_init": [edit, _w(f"{pkg}/__init__.py", inst.files[f"{pkg}/__init__.py"]
                                        + f"\nfrom .{mod} import {fn}  # noqa: F401\n"), Final("Fixed.")],
    }


#: task_01 seeds of each family, the failing test calling the faulty function (d) or a caller of it (i):
#: batching 0 (d) 10 and 76 (i), durations 1 and 77 (d) 4 (i), money 2 (d) 7 (i).
SEEDS_01 = (0, 1, 2, 4, 7, 10, 76, 77)


@pytest.mark.parametrize("seed", SEEDS_01)
def test_a_fault_replaced_from_elsewhere_fails_and_fixes_in_place_pass(seed):
    inst = instance("01", seed)
    module = inst.expected["module"]
    for name, solution in replaced_01(inst).items():
        why = judged("01", seed, solution)
        assert why is not None, f"{name} passed"
        assert f"the defect is still in {module}" in why and inst.expected["function"] in why, (name, why)
    for name, solution in kept_01(inst).items():
        assert judged("01", seed, solution) is None, name


def test_the_players_monkeypatch_at_seed_76_fails_naming_where_the_copy_is():
    inst = instance("01", 76)
    assert (inst.expected["module"], inst.expected["function"]) == ("bookkeep/batching.py", "chunk")
    why = judged("01", 76, replaced_01(inst)["players_init_copy"])
    assert why is not None and "defined in bookkeep/__init__.py, not in bookkeep/batching.py" in why, why


def _regex(inst, pattern: str) -> list:
    mod = inst.expected["module"]
    original = inst.files[mod]
    return [_w(mod, original.replace('r"(\\d)([hms])"', f'r"({pattern})([hms])"')),
            Final(f"parse_duration now reads the whole number: `{pattern}`.")]


@pytest.mark.parametrize("seed", (1, 4, 77))
def test_a_digit_count_short_of_every_number_fails(seed):
    inst = instance("01", seed)
    assert inst.expected["function"] == "parse_duration"
    for pattern in (r"\d{1,2}", r"\d{1,3}", r"\d{1,4}", r"\d\d?"):
        why = judged("01", seed, _regex(inst, pattern))
        assert why is not None and "held-out cases of parse_duration fail" in why, (pattern, why)
    for pattern in (r"\d+", r"[0-9]+", r"\d{1,}"):
        assert judged("01", seed, _regex(inst, pattern)) is None, pattern


def test_the_players_two_digit_regex_at_seed_77_fails_on_a_three_digit_number():
    why = judged("01", 77, _regex(instance("01", 77), r"\d{1,2}"))
    assert why is not None and "parse_duration('120m',) 1200, expected 7200" in why, why


@pytest.mark.parametrize("seed", (2, 7))
def test_money_fixed_for_positive_short_amounts_only_fails(seed):
    inst = instance("01", seed)
    mod = inst.expected["module"]
    original = inst.files[mod]
    half_up = original.replace("    return int(float(amount) * 100)\n", "    return int(float(amount) * 100 + 0.5)\n")
    why = judged("01", seed, [_w(mod, half_up), Final("Rounded to the nearest cent.")])
    assert why is not None and "held-out cases of to_cents fail: to_cents('-" in why, why


def _line_05(inst, line: str) -> list:
    mod, at = inst.expected["module"], inst.expected["faulty_line"] - 1
    lines = inst.files[mod].splitlines(keepends=True)
    lines[at] = line
    return [_w(mod, "".join(lines)), Final("Fixed the faulty line.")]


#: task_05 seeds with the leap-year fault (77 is the player's), with the median's (76), with percent_change's.
LEAP_SEEDS, MEDIAN_SEEDS, PERCENT_SEEDS = (0, 2, 77), (5, 76), (1, 4)


@pytest.mark.parametrize("seed", LEAP_SEEDS)
def test_a_leap_rule_wrong_on_some_centuries_fails(seed):
    inst = instance("05", seed)
    assert inst.expected["function"] == "is_leap_year"
    for rule, year in (("year % 200 == 0", "1800"), ("year % 800 == 0", "2000"), ("year == 2000", "1600"),
                       ("year % 400 == 0 and year < 2100", "2400")):
        line = f"    return year % 4 == 0 and (year % 100 != 0 or {rule})\n"
        why = judged("05", seed, _line_05(inst, line))
        assert why is not None and f"is_leap_year({year},)" in why, (rule, why)
    assert judged("05", seed, _line_05(inst, "    return year % 400 == 0 or (year % 4 == 0 and year % 100 != 0)\n")) \
        is None


def test_the_players_200_rule_at_seed_77_fails_on_1800():
    why = judged("05", 77, _line_05(instance("05", 77),
                                    "    return year % 4 == 0 and (year % 100 != 0 or year % 200 == 0)\n"))
    assert why is not None and "is_leap_year(1800,) returned True, expected False" in why, why


@pytest.mark.parametrize("seed", MEDIAN_SEEDS)
def test_a_median_by_floor_division_fails(seed):
    inst = instance("05", seed)
    assert inst.expected["function"] == "median"
    why = judged("05", seed, _line_05(inst, "    return (xs[mid - 1] + xs[mid]) // 2\n"))
    assert why is not None and "median(" in why and "expected" in why, why


@pytest.mark.parametrize("seed", LEAP_SEEDS + MEDIAN_SEEDS + PERCENT_SEEDS)
def test_a_faulty_function_rebound_after_its_def_fails(seed):
    """task_05's diff allows lines added after the faulty one: a module-level rebinding there is no fix."""
    inst = instance("05", seed)
    fn = inst.expected["function"]
    right = {"is_leap_year": "lambda year: year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)",
             "median": "__import__('statistics').median",
             "percent_change": "lambda old, new: (new - old) / old * 100"}[fn]
    faulty = inst.files[inst.expected["module"]].splitlines(keepends=True)[inst.expected["faulty_line"] - 1]
    why = judged("05", seed, _line_05(inst, f"{faulty}{fn} = {right}\n"))
    assert why is not None and f"the {fn} that is called" in why, why
