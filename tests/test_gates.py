"""CI gates: which gate fails on which numbers, and the exit status they give."""

from __future__ import annotations

from pytest_agentic.verdicts import compare, gates
from pytest_agentic.verdicts.gates import GATE_FAILED_EXIT, GateConfig

from .records import record, scores


def failed(results):
    return [r.gate for r in results if not r.passed]


def test_min_pass_rate_and_lower_bound():
    records = scores({"t1": 3, "t2": 3, "t3": 0})  # 6/9: 66.7%, Wilson lower bound 35.4%
    assert failed(gates.evaluate(GateConfig(min_pass_rate=0.6), records)) == []
    assert failed(gates.evaluate(GateConfig(min_pass_rate=0.7), records)) == ["min-pass-rate"]
    assert failed(gates.evaluate(GateConfig(min_lower_bound=0.3), records)) == []
    results = gates.evaluate(GateConfig(min_lower_bound=0.4), records)
    assert failed(results) == ["min-lower-bound"] and "35.4%" in results[0].detail


def test_infra_errors_are_not_failures_but_are_gated_on_their_own():
    records = scores({"t1": 3}) + [record("t1", n, False, mode="infra_error") for n in (4, 5)]
    assert failed(gates.evaluate(GateConfig(min_pass_rate=1.0), records)) == []
    assert failed(gates.evaluate(GateConfig(max_infra_errors=2), records)) == []
    results = gates.evaluate(GateConfig(max_infra_errors=1), records)
    assert failed(results) == ["max-infra-errors"] and results[0].detail == "2 infra error(s) > 1 allowed"


def test_regression_fails_only_beyond_noise():
    high, low = scores({"t": 15}, runs=15), scores({"t": 2}, runs=15)
    config = GateConfig(fail_on_regression=True)
    assert failed(gates.evaluate(config, low, compare.compare(high, low))) == ["fail-on-regression"]
    assert failed(gates.evaluate(config, high, compare.compare(low, high))) == []  # up is no regression
    slight = scores({"t": 13}, runs=15)  # 15/15 -> 13/15: down, but within noise
    assert failed(gates.evaluate(config, slight, compare.compare(high, slight))) == []
    assert failed(gates.evaluate(config, low, None)) == ["fail-on-regression"]


def test_exit_status():
    ok, bad = [gates.GateResult("g", True, "")], [gates.GateResult("g", False, "")]
    plain, only = GateConfig(min_pass_rate=0.5), GateConfig(min_pass_rate=0.5, gate_only=True)
    assert gates.exit_status(plain, ok, 1, 0) == 1  # failed runs fail the session as usual
    assert gates.exit_status(plain, bad, 0, 0) == GATE_FAILED_EXIT
    assert gates.exit_status(plain, bad, 1, 0) == GATE_FAILED_EXIT
    assert gates.exit_status(only, ok, 1, 0) == 0  # gate-only: failed runs are the model's, gates decide
    assert gates.exit_status(only, ok, 1, 2) == 1  # other failed tests are never hidden
    assert gates.exit_status(only, bad, 1, 0) == GATE_FAILED_EXIT
    assert gates.exit_status(only, bad, 2, 0) == 2  # interrupted stays interrupted
    assert gates.exit_status(only, ok, 1, 0, infra_errors=1) == 1  # lost runs are not hidden either...
    bounded = GateConfig(max_infra_errors=1, gate_only=True)
    assert gates.exit_status(bounded, ok, 1, 0, infra_errors=1) == 0  # ...unless a gate bounds them
