"""Tables and summaries: pass@k and pass^k overall, consistency of flaky tasks, secrets kept out."""

from __future__ import annotations

from pytest_agentic.run import redact

from pytest_agentic.campaign import summary, tables

from .records import record


def test_flaky_tasks_list_which_runs_failed_and_how():
    records = [record("t", 1, True), dict(record("t", 2, False, mode="wrong_answer"),
                                          reason="AssertionError: files were written in the wrong order"),
               record("t", 3, False, mode="gave_up_mid_plan"), record("u", 1, True),
               record("u", 2, False, mode="infra_error")]
    rows = {r["task"]: r for r in tables.consistency(records)}
    assert rows["t"]["verdict"] == "flaky" and rows["t"]["score"] == "1/3"
    assert rows["t"]["failed_runs"] == "run2: wrong_answer; run3: gave_up_mid_plan"
    assert rows["u"]["verdict"] == "solid"  # the infra error is not judged
    text = summary.consistency_markdown(records)
    assert "## flaky (1)" in text and "run3: gave_up_mid_plan" in text
    assert "- m t run2: wrong_answer (stop: final_answer): `AssertionError: files were written in the wrong order`" in text


def test_secret_parameters_are_redacted():
    params = {"max_tokens": 5, "top_k": 3, "aws_secret_access_key": "s", "extra_headers": {"Authorization": "b"},
              "extra_body": {"x-api-key": "k", "reasoning": {"effort": "low"}}}
    assert redact.redact_secret_keys(params) == {"max_tokens": 5, "top_k": 3, "aws_secret_access_key": "<redacted>",
                                         "extra_headers": {"Authorization": "<redacted>"},
                                         "extra_body": {"x-api-key": "<redacted>", "reasoning": {"effort": "low"}}}


def test_overall_pass_at_k_is_the_mean_over_tasks():
    from .records import scores

    records = scores({"a": 3, "b": 3, "c": 0, "d": 0, "e": 1})  # 7/15
    overall = next(r for r in tables.pass_rate_by_task(records, 3) if r["task"] == "ALL")
    assert overall["passed"] == 7 and overall["judged"] == 15
    assert overall["pass@1"] == round(7 / 15, 4)
    assert overall["pass@3"] == 0.6  # a, b and e pass at least once in three; c and d never
    assert overall["pass^3"] == 0.4  # only a and b pass every time
    e = next(r for r in tables.pass_rate_by_task(records, 3) if r["task"] == "e")
    assert (e["pass@1"], e["pass@2"], e["pass^2"]) == (0.3333, 0.6667, 0.0)


def test_many_runs_show_a_ladder_of_k_not_every_k():
    from .records import scores

    records = scores({"a": 30, "b": 10}, runs=30)  # b: 10 of 30
    rows = {r["task"].split()[0]: r for r in summary.score_rows(records, 30)}
    assert "pass@1,2,3,5,10,20,30" in rows["b"] and "pass^1,2,3,5,10,20,30" in rows["b"]
    values = rows["b"]["pass@1,2,3,5,10,20,30"].split()
    assert len(values) == 7 and values[0] == "0.33" and values[-1] == "1.00"
    assert rows["b"]["pass^1,2,3,5,10,20,30"].split()[-1] == "0.00"
    # Three runs keep every k, as before; the CSV keeps every k whatever the runs.
    assert "pass@1..3" in summary.score_rows(scores({"a": 2}), 3)[0]
    assert "pass@17" in tables.pass_rate_by_task(records, 30)[0]
    assert summary.shown_ks(300) == [1, 2, 3, 5, 10, 20, 50, 100, 200, 300]
    # The report page shows the same k.
    from pytest_agentic.report import views

    assert len(views.headline(records, 30)[0]["pass_at"]) == 7 and summary.ks_label(30) == "1,2,3,5,10,20,30"


def test_wilson_interval_equals_scipys():
    from scipy.stats import binomtest

    from pytest_agentic.campaign.stats import wilson_interval

    for runs in range(1, 60):
        for passed in range(runs + 1):
            for confidence in (0.9, 0.95, 0.99):
                ci = binomtest(passed, runs).proportion_ci(confidence_level=confidence, method="wilson")
                low, high = wilson_interval(passed, runs, confidence)
                assert abs(low - ci.low) < 1e-12 and abs(high - ci.high) < 1e-12, (passed, runs, confidence)


def test_pass_curves_equal_the_closed_forms_at_every_k():
    """pass@k and pass^k for all k at once (a running product) agree with the binomial closed forms."""
    from math import comb

    from pytest_agentic.campaign.stats import pass_at_k, pass_curves, pass_hat_k

    for runs in range(1, 25):
        for passed in range(runs + 1):
            at, hat = pass_curves(runs, passed, runs + 2)
            assert len(at) == len(hat) == runs  # no k beyond the runs
            for k in range(1, runs + 1):
                assert abs(at[k - 1] - pass_at_k(runs, passed, k)) < 1e-12
                assert abs(hat[k - 1] - comb(passed, k) / comb(runs, k)) < 1e-12
                assert pass_hat_k(runs, passed, k) == comb(passed, k) / comb(runs, k)
    at, hat = pass_curves(3000, 1500, 3000)  # a big campaign's task: every k, in floats, without overflow
    assert at[-1] == 1.0 and hat[-1] == 0.0 and 0.0 < hat[9] < 0.001 and len(at) == 3000


def test_a_task_of_thousands_of_runs_gets_every_k():
    rows = tables.pass_rate_by_task([record("task_01", i, i % 2 == 0) for i in range(2000)], 2000)
    task, overall = rows
    assert task["pass@1"] == overall["pass@1"] == 0.5 and task["pass@2000"] == 1.0 and task["pass^2000"] == 0.0
    assert task["pass^2"] == round(1000 * 999 / (2000 * 1999), 4)


def test_terminal_tables_fit_120_columns_or_fold_keeping_every_cell():
    from pytest_agentic.campaign import economy

    names = ["fix_failing_test", "refactor_duplicated_code", "investigate_log", "trace_through_codebase",
             "minimal_fix", "handle_ambiguous_requirement", "multi_step_plan", "recover_from_tool_error",
             "know_when_to_stop", "sql_investigation"]
    records = [record(f"task_{i:02d}", n, n == 1, model="nemotron-nano-3-30b-deepinfra", name=name)
               for i, name in enumerate(names, 1) for n in (1, 2, 3)]
    for rows in (summary.score_rows(records, 3), summary.cost_rows(records),
                 economy.economy_rows(records, overall_only=True)):
        whole = summary.markdown_table(rows)
        folds = summary.folded_tables(rows)
        lines = [line for table in folds for line in table.splitlines()]
        assert max(map(len, lines)) <= summary.TERMINAL_WIDTH, "\n".join(lines)
        if max(map(len, whole.splitlines())) <= summary.TERMINAL_WIDTH:
            assert folds == [whole]
            continue
        assert len(folds) > 1
        # Every fold names its rows; every other column is in exactly one fold; no cell is lost.
        headers = [[h.strip() for h in table.splitlines()[0].strip("|").split("|")] for table in folds]
        keys = [c for c in rows[0] if c in summary.ROW_KEYS]
        assert all(h[:len(keys)] == keys for h in headers)
        assert sorted(c for h in headers for c in h[len(keys):]) == sorted(c for c in rows[0] if c not in keys)
        for table in folds:
            body = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]
            header = [h.strip() for h in table.splitlines()[0].strip("|").split("|")]
            assert body == [[str(row[c]) for c in header] for row in rows]
