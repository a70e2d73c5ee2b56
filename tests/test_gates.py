"""CI gates: which gate fails on which numbers, and the exit status they give."""

from __future__ import annotations

import statistics

from pytest_agentic.verdicts import compare, gates
from pytest_agentic.verdicts.gates import GATE_FAILED_EXIT, GateConfig

from .records import record, scores


def failed(results):
    return [r.gate for r in results if not r.passed]


def test_min_pass_rate_and_lower_bound():
    records = scores({"t1": 3, "t2": 3, "t3": 2, "t4": 0, "t5": 3, "t6": 3})  # 14/18: 77.8%
    # Clustered by task: rates 1, 1, 2/3, 0, 1, 1; SE = sd / sqrt(6); t(0.975, 5) = 2.5706.
    rates = [1, 1, 2 / 3, 0, 1, 1]
    low = 14 / 18 - 2.570582 * statistics.stdev(rates) / 6 ** 0.5  # 0.3683; Wilson's would be 0.5479
    assert failed(gates.evaluate(GateConfig(min_pass_rate=0.7), records)) == []
    results = gates.evaluate(GateConfig(min_pass_rate=0.8), records)
    assert failed(results) == ["min-pass-rate"]
    assert results[0].detail == f"m: pass rate 14/18 = 77.8% (95% CI {low:.1%}-100.0%, task-clustered t, 5 df) < 80.0%"
    assert failed(gates.evaluate(GateConfig(min_lower_bound=0.35), records)) == []
    results = gates.evaluate(GateConfig(min_lower_bound=0.5), records)  # Wilson's bound (54.8%) would pass
    assert failed(results) == ["min-lower-bound"]
    assert results[0].detail == (f"m: 95% lower bound {low:.1%} (14/18; 95% CI {low:.1%}-100.0%, task-clustered t, "
                                 "5 df) < 50.0%")


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
