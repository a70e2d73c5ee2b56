"""The terminal of a campaign: a live status line on a terminal, plain lines when piped, readable failed runs."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

import pytest

from pytest_agentic.campaign.failureblock import EXCERPT_CHARS, block_lines, headline
from pytest_agentic.campaign.progress import Progress, clock
from pytest_agentic.run.task import Final
from pytest_agentic.terminal import _Sink

from .fault_server import FaultServer
from .helpers import campaign_dir, runs
from .test_concurrency import project, say_ok_project  # noqa: F401 - fixtures and helpers shared with these tests
from .vt import render, run_in_pty

#: The status line's counts, as drawn (the total is missing until the xdist controller knows it).
STATUS = re.compile(r"agentic: (\d+)(?:/(\d+))? judged, (\d+) in flight, (\d+) passed")
HOSTILE = ("\x1b[2J\x1b[Hcleared\x1b]0;pwned\x07\ragentic: 99/99 judged, 0 in flight, 99 passed\x08\x08"
           "\x1b[5A\u202eevil\nsecond line\r\n" + "x" * 5000)


def statuses(raw: str) -> list[tuple[int, int | None, int, int]]:
    """The status lines drawn on a terminal (each drawn at the start of a line)."""
    drawn = re.compile(r"[\r\n]" + STATUS.pattern)
    return [(int(j), int(t) if t else None, int(f), int(p)) for j, t, f, p in drawn.findall(raw)]


@pytest.fixture
def endpoint():
    with FaultServer({"Say ok.": [Final("ok")]}, latency_s=0.3) as server:
        yield server


# -- the progress model and the failure block, alone -------------------------------------------
def test_progress_counts_spend_and_estimate():
    progress = Progress(selected=10, started_at=100.0)
    progress.begin(now=102.0)
    progress.judge({"passed": True, "prompt_tokens": 900, "completion_tokens": 300, "cost_usd": 0.25})
    progress.judge({"passed": False, "failure_mode": "infra_error", "cost_usd": None})
    progress.skipped += 1
    progress.in_flight_by.update({"gw0": 2, "gw1": 3})
    assert progress.eta_s(now=108.0) == pytest.approx(7 * 6 / 3)
    assert progress.line(now=108.0) == ("agentic: 2/10 judged, 5 in flight, 1 passed, 1 infra, 1 skipped | "
                                        "1.2k tok, $0.2500+? | 0:08, ~0:14 left")
    assert Progress(selected=3, started_at=0.0).line(now=5.0).endswith("0:05, ? left")
    assert clock(3725) == "1:02:05"


def test_failure_block_makes_hostile_text_one_safe_line():
    record = {"failure_mode": "wrong_answer", "model": "m\x1b[31m", "task": "task_09", "task_name": "stop", "run": 2,
              "tags": {"tool_errors": 0, "quick_fail": True, "stop_reason": "final_answer"},
              "reason": f"AssertionError: the answer is wrong: {HOSTILE}"}
    lines = block_lines(record, {"final_answer": HOSTILE}, "/c/transcripts/m/task_09-run2.json", "file:///c/r.html#a")
    assert lines[0] == "wrong_answer: model m, task task_09 (stop), run 2"
    assert lines[1] == "tags: quick_fail=True"
    assert all(not re.search(r"[\x00-\x1f\x7f\u202e]", line) for line in lines), lines
    answer = next(line for line in lines if line.startswith("final answer: "))
    assert len(answer) == len("final answer: ") + EXCERPT_CHARS and "second line" in answer
    assert headline(record).startswith("wrong_answer: the answer is wrong: cleared")
    # A long answer shows its start and its end, where the answer lines stand.
    report = "## Report\n" + "The trace goes through many modules. " * 40 + "\nVALUE: 4197\nFUNCTION: shop/banded.py:fee"
    shown = next(line for line in block_lines(record, {"final_answer": report}, "t.json", None)
                 if line.startswith("final answer: "))
    assert shown.startswith("final answer: ## Report The trace")
    assert shown.endswith("VALUE: 4197 FUNCTION: shop/banded.py:fee")
    assert " … " in shown and len(shown) == len("final answer: ") + EXCERPT_CHARS
    # No final answer: the last tool call stands for the run.
    last = block_lines({**record, "tags": {}}, {"final_answer": None, "tool_calls": [
        {"name": "fs_read", "raw_arguments": '{"path": "a"}', "result": "no such file"}]}, "t.json", None)
    assert 'no final answer; last tool call: fs_read({"path": "a"}) -> no such file' in last


class FakeTerminal:
    """pytest's file and the sink's descriptor in one ordered stream, as one terminal receives them."""

    def __init__(self) -> None:
        self.read_fd, self.fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self.stream: list[str] = []

    def drain(self) -> str:
        try:
            self.stream.append(os.read(self.read_fd, 65536).decode())
        except BlockingIOError:
            pass
        return "".join(self.stream)

    def write(self, text: str) -> int:
        self.drain()
        self.stream.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_the_status_line_is_cleared_before_pytest_writes_and_drawn_below_its_line():
    terminal = FakeTerminal()
    sink = _Sink(terminal, terminal.fd, width=40)
    screens = []
    for step in ["collected 3 items\n", "agentic: 0/3 judged", "test_a.py ", "agentic: 0/3 judged, 1 in flight",
                 "..", "agentic: 2/3 judged" + "x" * 60, ".", "agentic: 3/3 judged"]:
        if step.startswith("agentic"):
            sink.show(step)
        else:
            sink.write(step)
        screens.append(render(terminal.drain(), 40))
    assert screens[1] == ["collected 3 items", "agentic: 0/3 judged"]
    assert screens[3] == ["collected 3 items", "test_a.py", "agentic: 0/3 judged, 1 in flight"]
    assert screens[4] == ["collected 3 items", "test_a.py ..", ""]
    assert screens[5] == ["collected 3 items", "test_a.py ..", "agentic: 2/3 judged" + "x" * 20]  # cut to the width
    assert screens[7] == ["collected 3 items", "test_a.py ...", "agentic: 3/3 judged"]
    sink.clear()
    assert render(terminal.drain(), 40) == ["collected 3 items", "test_a.py ...", ""]
    os.close(terminal.fd)
    os.close(terminal.read_fd)


# -- sessions under a pseudo-terminal, and piped -------------------------------------------------
@pytest.mark.parametrize("args", [[], ["-n", "2"], ["--agentic-concurrency", "4"]],
                         ids=["plain", "xdist", "concurrency"])
def test_a_terminal_shows_one_status_line_that_changes(pytester, endpoint, monkeypatch, args):
    monkeypatch.setenv("AGENTIC_TEST_FAIL_RUN", "3")
    say_ok_project(pytester, endpoint)
    raw = run_in_pty(["-p", "no:cacheprovider", "--runs", "8", "--agentic-out", "out", *args], pytester.path)
    drawn = statuses(raw)
    judged = [j for j, *_ in drawn]
    assert judged == sorted(judged) and set(range(1, 9)) <= set(judged), drawn
    assert all(total in (None, 8) for _, total, _, _ in drawn) and drawn[-1][1:] == (8, 0, 7)
    if args and args[0] == "--agentic-concurrency":
        assert max(flight for _, _, flight, _ in drawn) >= 2, drawn
    # What the terminal shows at the end: pytest's lines intact, no status line left over.
    screen = render(raw)
    assert not any("judged," in line for line in screen), screen
    dots = [line for line in screen if re.fullmatch(r"(test_say_ok\.py )?[.F]{8}\s+\[100%\]", line)]
    assert len(dots) == 1 and dots[0].count("F") == 1, screen  # in order, or as xdist's workers finish
    assert "wrong_answer: model local, task say_ok_1 (say_ok), run 3" in screen
    assert any(re.search(r"1 failed, 7 passed", line) for line in screen), screen
    assert len(runs(campaign_dir(pytester.path / "out"))) == 8


@pytest.mark.parametrize("args", [[], ["-n", "2"], ["--agentic-concurrency", "4"]],
                         ids=["plain", "xdist", "concurrency"])
def test_piped_output_gets_plain_progress_lines(project, args):
    # Ten task files: a plain line waits for pytest's line of a file to end, then says where the campaign is.
    result = project.runpytest_subprocess("tasks", "-p", "no:randomly", "--model", "oracle", "--runs", "2",
                                          "--agentic-out", "out", *args)
    result.assert_outcomes(passed=20)
    lines = [line for line in result.outlines if STATUS.search(line)]
    assert all(STATUS.match(line) for line in lines), lines  # each a line of its own
    judged = [int(STATUS.match(line).group(1)) for line in lines]
    assert len(lines) >= 2 and judged == sorted(judged) and judged[-1] == 20, lines
    assert all(line.split(" judged")[0].endswith("/20") for line in lines), lines
    assert "\r" not in result.stdout.str() and "\x1b" not in result.stdout.str()


@pytest.mark.parametrize("args", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_session_of_other_tests_shows_no_progress(pytester, endpoint, args):
    # A project with a models.yaml whose session runs no agent test (the harness's own tests, say).
    say_ok_project(pytester, endpoint)
    pytester.makepyfile(test_plain="import time\n\ndef test_a():\n    time.sleep(0.3)\n\n"
                                   "def test_b():\n    pass\n")
    result = pytester.runpytest_subprocess("test_plain.py", *args)
    result.assert_outcomes(passed=2)
    assert "judged" not in result.stdout.str()


@pytest.mark.parametrize("args", [["-q"], ["-qq"], ["-p", "no:terminal"]])
def test_quiet_sessions_show_no_progress_lines(pytester, endpoint, args):
    say_ok_project(pytester, endpoint)
    result = pytester.runpytest_subprocess("--runs", "2", "--agentic-out", "out", *args)
    assert result.ret == 0
    assert "judged" not in result.stdout.str()
    assert len(runs(campaign_dir(pytester.path / "out"))) == 2


def test_capture_no_on_a_terminal_writes_plain_lines(pytester, endpoint):
    say_ok_project(pytester, endpoint)
    raw = run_in_pty(["-p", "no:cacheprovider", "--runs", "3", "--agentic-out", "out", "-s"], pytester.path)
    assert "agentic: 3/3 judged" in raw
    assert "\x1b[K" not in raw and "\x1b[1A" not in raw


# -- failed runs ---------------------------------------------------------------------------------
def failure_texts(path):
    return [(f.get("message"), f.text) for f in ET.parse(path).getroot().iter("failure")]


def test_thirty_wrong_answers_print_thirty_concise_blocks(project):
    result = project.runpytest_subprocess("tasks", "-p", "no:randomly", "--model", "near-miss", "--runs", "3",
                                          "--agentic-out", "out", "--junitxml", "j.xml", "-rf")
    result.assert_outcomes(failed=30)
    out = result.stdout.str()
    heads = [line for line in result.outlines if line.startswith("wrong_answer: model near-miss, task task_")]
    assert len(heads) == 30 and len(set(heads)) == 30
    assert out.count("\nreason: ") == 30 and out.count("\nfinal answer: ") == 30
    folder = campaign_dir(project.path / "out").resolve()
    assert out.count(f"\ntranscript: {folder}/transcripts/near-miss/task_") == 30
    assert out.count(f"\nreport: {(folder / 'report.html').as_uri()}#task_") == 30
    # No checker source, no assertion introspection.
    assert "answerlines.read" not in out
    assert not any(line.startswith((">", "E   ")) for line in result.outlines)
    # JUnit carries the same: the headline as the message, the block as the text.
    failures = failure_texts(project.path / "j.xml")
    assert len(failures) == 30
    for message, text in failures:
        assert message.startswith("wrong_answer: ") and text.startswith("wrong_answer: model near-miss")
        assert "answerlines.read" not in text and "\nE   " not in text
    # The top-down end: the verdict, then the tables, then where things are.
    result.stdout.fnmatch_lines(["*= agentic campaign =*", "- near-miss: 0/30 = 0.0%*", "*near-miss*ALL*0/30*",
                                 f"campaign written to *", "report: file://*", "failed runs: 30; *",
                                 "*short test summary info*", "FAILED *"])


@pytest.mark.parametrize("args", [["--tb=long"], ["--agentic-tb=full"], ["-vv"]])
def test_the_checker_traceback_is_there_when_asked_for(project, args):
    result = project.runpytest_subprocess("tasks", "-p", "no:randomly", "--model", "near-miss", "--runs", "2",
                                          "-m", "task_09", "--agentic-out", "out", *args)
    result.assert_outcomes(failed=2, deselected=18)
    assert result.stdout.str().count("answerlines.read") >= 2
    assert sum(line.startswith("E   ") for line in result.outlines) >= 2
    assert "the checker's traceback: --agentic-tb=full" not in result.stdout.str()


def test_concise_overrides_tb_long(project):
    result = project.runpytest_subprocess("tasks", "-p", "no:randomly", "--model", "near-miss", "--runs", "1",
                                          "-m", "task_09", "--agentic-out", "out", "--tb=long", "--agentic-tb=concise")
    result.assert_outcomes(failed=1, deselected=9)
    assert "answerlines.read" not in result.stdout.str()
    result.stdout.fnmatch_lines(["wrong_answer: model near-miss, task task_09 (know_when_to_stop), run 1"])


HOSTILE_TASK = f'''
from pytest_agentic import Final, TaskInstance, task

HOSTILE = {HOSTILE!r}

def build(seed):
    return TaskInstance(prompt="Say ok.", files={{}}, tools=("fs_list",), reference=[Final(HOSTILE)])

@task("hostile_1", "hostile", build=build)
def test_hostile(agent):
    run = agent.run()
    assert run.final_answer == "ok", f"the answer is not ok: {{run.final_answer}}"
'''


@pytest.mark.parametrize("args", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_hostile_final_answer_disturbs_neither_the_status_line_nor_the_blocks(pytester, args):
    endpoint = FaultServer({"Say ok.": [Final(HOSTILE)]}, latency_s=0.1)
    with endpoint:
        say_ok_project(pytester, endpoint)
        pytester.makepyfile(test_say_ok=HOSTILE_TASK)
        raw = run_in_pty(["-p", "no:cacheprovider", "--runs", "3", "--agentic-out", "out", "-rf", *args],
                         pytester.path)
    for sequence in ("\x1b[2J", "\x1b]0;pwned", "\x08", "\x1b[5A", "\u202e", "x" * 300):
        assert sequence not in raw, repr(sequence)
    drawn = statuses(raw)
    assert [d for d in drawn if d[0] == 99] == [] and drawn[-1][:2] == (3, 3)
    screen = render(raw)
    assert not any("judged," in line and "99/99" not in line for line in screen)  # the real status line is gone
    # The fake status text stays inside the lines that quote the answer; each quote is one cut line.
    quoting = [line for line in screen if "99/99 judged" in line]
    assert quoting and all(line.startswith(("reason: ", "final answer: ", "FAILED ")) for line in quoting), quoting
    answers = [line for line in screen if line.startswith("final answer: ")]
    assert len(answers) == 3 and all(len(line) <= len("final answer: ") + EXCERPT_CHARS for line in answers)
    assert sum(line.startswith("wrong_answer: model local, task hostile_1 (hostile), run ") for line in screen) == 3
