"""The collector's pause: counted across threads, and the collector back on after litellm's import."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import pytest

from pytest_agentic.run import gcpause


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_a_pause_turns_the_collector_off_and_back_on() -> None:
    with gcpause.paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_overlapping_pauses_on_two_threads_resume_at_the_last_end() -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def other() -> None:
        with gcpause.paused():
            second_in.set()
            first_out.wait(5)
            seen["after the first ended"] = gc.isenabled()
        seen["after both ended"] = gc.isenabled()

    with gcpause.paused():
        first_in.set()
        thread = threading.Thread(target=other)
        thread.start()
        assert second_in.wait(5)
    first_out.set()
    thread.join(5)
    assert seen == {"after the first ended": False, "after both ended": True}


def test_a_collector_the_user_turned_off_stays_off() -> None:
    gc.disable()
    with gcpause.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_error_in_the_block_still_resumes_the_collector() -> None:
    with pytest.raises(RuntimeError), gcpause.paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_the_preload_leaves_the_collector_on() -> None:
    """The preload's import and warm-up pause the collector and turn it back on (a fresh interpreter: the
    import's warning filter would otherwise leave with this test's warning context, see ``quiet_import_noise``)."""
    probe = ("import gc, os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'\n"
             "from pytest_agentic.run.calls import llm\n"
             "from pytest_agentic.run import gcpause\n"
             "seen = []\n"
             "inner = llm._warm_up\n"
             "llm._warm_up = lambda litellm: (seen.append(gc.isenabled()), inner(litellm))\n"
             "llm._import_quietly(warm_up=True)\n"
             "print(seen, gc.isenabled(), 'litellm' in __import__('sys').modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["[False]", "True", "True"], done.stdout + done.stderr
