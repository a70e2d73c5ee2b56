"""Model- and endpoint-written text in summary.md and the terminal renders as text, on one line."""

from __future__ import annotations

from pytest_agentic.campaign import summary
from pytest_agentic.campaign.untrusted import code_span, one_line

from .records import record

HOSTILE = ("\x1b[2J\x1b[31mowned\x1b[0m\x1b]8;;http://evil.example\x07link\x1b]8;;\x07 | col `tick` "
           "<script>alert(1)</script> ![img](http://evil.example/x.png)\nsecond line\r\x00\u202eevil")


def test_one_line_drops_escape_sequences_and_control_characters():
    text = one_line(HOSTILE, limit=1000)
    assert "\x1b" not in text and "\n" not in text and "\r" not in text and "\x00" not in text
    assert "\u202e" not in text
    assert "owned" in text and "second line" in text
    assert len(one_line("x" * 500, limit=50)) == 50


def test_a_code_span_cannot_be_closed_or_split_by_the_text_it_holds():
    span = code_span(HOSTILE, limit=1000)
    assert span.startswith("`") and span.endswith("`") and span.count("`") == 2
    assert "|" not in span
    assert "<script>" in span  # shown literally, inside the code span
    assert code_span("") == ""


def _summary(records):
    return summary.summary_markdown(records, campaign_id="c", seed=0, runs=2, complete=True,
                                    started_at="s", finished_at="f", notes=[])


def test_a_checker_message_quoting_the_answer_stays_inside_its_line():
    flaky = [record("task_03", 1, True), record("task_03", 2, False)]
    flaky[1]["reason"] = f"AssertionError: the answer names {HOSTILE}"
    text = summary.consistency_markdown(flaky)
    line = next(line for line in text.splitlines() if line.startswith("- m task_03 run2"))
    assert "second line" in line and "\x1b" not in text
    assert line.count("`") == 2 and "<script>" in line.split("`")[1]


def test_an_endpoint_reply_in_an_infra_cause_does_not_break_the_table():
    lost = record("task_03", 1, False, mode="infra_error")
    lost["infra_cause"] = f"APIError: {HOSTILE}"
    text = _summary([lost, record("task_03", 2, True)])
    section = text[text.index("## Infra errors"):]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert len(rows) == 3  # header, rule, one run
    assert all(row.count("|") == rows[0].count("|") for row in rows)
    assert "\x1b" not in text and "\u202e" not in text
