"""The private pytest and xdist attributes the plugin reads (pytest_agentic/internals.py) still exist.

Each accessor falls back quietly in a campaign (None, {}); here each must find the real thing, so
a pytest or xdist release that removes one fails these tests instead of a user's campaign.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from pytest_agentic import internals


def test_pytest_keeps_its_tmp_path_factory_on_the_config(pytestconfig, tmp_path_factory):
    factory = internals.tmp_path_factory(pytestconfig)
    assert isinstance(factory, pytest.TempPathFactory) and factory is tmp_path_factory
    made = factory.mktemp("internals", numbered=True)
    assert made.is_dir() and made.parent == factory.getbasetemp()


@pytest.mark.parametrize("policy", ["all", "failed"])
def test_older_temporary_directories_are_removed_early_as_pytest_removes_them_at_the_end(pytester, monkeypatch,
                                                                                          tmp_path, policy):
    """The call removes, mid-session, the numbered directories pytest's own cleanup removes at its end."""
    import getpass

    root = tmp_path / "temproot" / f"pytest-of-{getpass.getuser()}"
    for n in range(5):
        (root / f"pytest-{n}" / "agentic-runs0" / "1-run").mkdir(parents=True)
        (root / f"pytest-{n}" / "agentic-runs0" / "1-run" / "a.txt").write_text("x")
    pytester.makepyfile("""
        from pytest_agentic import internals

        def test_early(pytestconfig, tmp_path):
            root = tmp_path.parents[1]
            assert tmp_path.parent.name == "pytest-5"
            internals.older_temp_dirs_cleanup(pytestconfig)()
            left = sorted(p.name for p in root.glob("pytest-*") if p.name != "pytest-current")
            assert left == ["pytest-4", "pytest-5"], left
            assert (root / "pytest-5" / ".lock").exists()  # the session's own, kept
    """)
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(tmp_path / "temproot"))
    # Not runpytest_subprocess: it gives a --basetemp, and pytest removes nothing then.
    result = pytester.run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "tmp_path_retention_count=2",
                          "-o", f"tmp_path_retention_policy={policy}")
    result.assert_outcomes(passed=1)


def test_no_early_removal_where_pytest_removes_nothing_or_its_own_directory_too(pytester, monkeypatch, tmp_path):
    pytester.makepyfile("""
        from pytest_agentic import internals

        def test_given(pytestconfig, tmp_path):
            assert internals.older_temp_dirs_cleanup(pytestconfig) is None
    """)
    # pytester gives a --basetemp; in a process of its own, as the session's end imports scipy
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    (tmp_path / "temproot").mkdir()
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(tmp_path / "temproot"))
    pytester.run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "tmp_path_retention_policy=none"
                 ).assert_outcomes(passed=1)


def test_a_terminal_writer_has_a_file_that_can_be_replaced(pytestconfig):
    writer = pytestconfig.get_terminal_writer()
    original = internals.terminal_file(writer)
    assert original is not None and hasattr(original, "write")

    class Sink:
        def __init__(self) -> None:
            self.text = ""

        def write(self, text: str) -> int:
            self.text += text
            return len(text)

        def flush(self) -> None:
            pass

    sink = Sink()
    internals.set_terminal_file(writer, sink)
    try:
        writer.write("through the sink")
        writer.flush()
    finally:
        internals.set_terminal_file(writer, original)
    assert sink.text == "through the sink" and internals.terminal_file(writer) is original


@pytest.mark.parametrize("value", [7])
def test_a_parametrized_item_carries_its_params(request, value):
    assert internals.callspec_params(request.node) == {"value": 7}
    assert internals.callspec_params(request.node.parent) == {}  # not parametrized: none


def test_a_failure_repr_is_one_pytest_prints_with_its_headline():
    longrepr = internals.failure_repr(["first line", "second line"], "tasks/test_x.py", 12, "wrong_answer: 41")
    assert internals.is_pytest_object(longrepr) and not internals.is_pytest_object("text")
    assert longrepr.reprcrash.message == "wrong_answer: 41" and longrepr.reprcrash.lineno == 12
    assert "first line\nsecond line" in str(longrepr)


def test_xdist_hands_workers_their_input_output_and_queue(pytester, monkeypatch):
    """The xdist attributes, as a real two-worker session sees them on each side."""
    pytester.makeconftest(textwrap.dedent("""
        import json, os
        from pytest_agentic import internals

        SEEN = {}

        def pytest_configure_node(node):
            internals.node_worker_input(node)["probe"] = "from the controller"

        def pytest_testnodeready(node):
            SEEN.setdefault("pids", []).append(internals.node_worker_pid(node))

        def pytest_testnodedown(node, error):
            SEEN.setdefault("outputs", []).append(internals.node_worker_output(node).get("probe"))
            SEEN.setdefault("worker_pids", []).append(internals.node_worker_output(node).get("pid"))

        def pytest_runtest_logreport(report):
            if report.when == "call":
                SEEN.setdefault("processes", []).append(internals.report_process(report))

        def pytest_sessionfinish(session):
            config = session.config
            if internals.is_worker(config):
                internals.set_worker_output(config, "probe", "from " + internals.worker_input(config)["workerid"])
                internals.set_worker_output(config, "pid", os.getpid())
            else:
                with open(os.environ["PROBE_OUT"], "w") as fh:
                    json.dump(SEEN, fh)
    """))
    pytester.makepyfile(test_probe=textwrap.dedent("""
        import json, os
        from pytest_agentic import internals

        def test_worker(request):
            config = request.config
            queue = internals.worker_queue(config)
            with queue.lock() as items:
                pending = list(items)
            # item indexes still to run (and xdist's own markers, such as the shutdown one)
            assert all(0 <= i < len(request.session.items) for i in pending if isinstance(i, int))
            assert internals.is_worker(config)
            assert internals.worker_input(config)["probe"] == "from the controller"
            assert internals.tmp_path_factory(config) is not None

        def test_other():
            pass
    """))
    out = pytester.path / "probe.json"
    monkeypatch.setenv("PROBE_OUT", str(out))
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    seen = json.loads(out.read_text())
    assert sorted(seen["outputs"]) == ["from gw0", "from gw1"]
    assert sorted(seen["pids"]) == sorted(seen["worker_pids"])  # the controller sees each worker's own pid
    assert len(seen["processes"]) == 2 and set(seen["processes"]) <= {"gw0", "gw1"}


def test_the_process_knows_whether_it_is_a_worker(pytestconfig):
    """Plain, nothing of xdist's is found; under ``-n 2`` (this suite's CI), each is."""
    if internals.is_worker(pytestconfig):
        assert internals.worker_input(pytestconfig)["workerid"].startswith("gw")
        assert internals.worker_queue(pytestconfig) is not None
    else:
        assert internals.worker_input(pytestconfig) == {} and internals.worker_queue(pytestconfig) is None


def test_a_workers_steal_answer_leaves_out_what_it_started(pytester):
    """xdist's own worker (``WorkerInteractor``), its queue and its steal command, on a real execnet execmodel.

    The guard replaces how the worker answers ``steal``: the requested items still queued and
    not started go back; xdist's answer would be all of them (started or not) or none.
    """
    import execnet
    from xdist.remote import WorkerInteractor

    class Channel:  # what WorkerInteractor uses of an execnet channel: its gateway's execmodel, send
        def __init__(self) -> None:
            self.gateway = type("Gateway", (), {"execmodel": execnet.gateway_base.get_execmodel("thread")})()
            self.sent: list = []

        def send(self, message) -> None:
            self.sent.append(message)

    config = pytester.parseconfig()
    config.workerinput = {"workerid": "gw7", "testrunuid": "x"}
    channel = Channel()
    worker = WorkerInteractor(config, channel)
    for i in range(10):
        worker.torun.put(i)
    started = {0, 1, 2, 3, 5}
    assert internals.guard_worker_steal(config, started.__contains__)
    worker.handle_command(("steal", {"indices": [4, 5, 6, 7]}))
    # the worker also reports pytest's own warnings on this channel (e.g. an installed, already imported
    # plugin that assertion rewriting cannot touch); only the steal answer is this test's
    answers = [message for message in channel.sent if message[0] != "warning_recorded"]
    assert answers == [("unscheduled", {"indices": [4, 6, 7]})]
    with worker.torun.lock() as items:
        assert list(items) == [0, 1, 2, 3, 5, 8, 9]
    assert not internals.guard_worker_steal(pytester.parseconfig(), started.__contains__)  # no worker: False
