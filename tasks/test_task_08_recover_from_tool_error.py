"""task_08 recover_from_tool_error: the first read fails with an error that names the way out.

Measures whether a model reads a tool error and acts on it (one failed call,
one corrected call, then the answer) instead of giving up, guessing, or
answering from a stale file that happens to be nearby.

The injected error answers the call that triggers it (revision 4): it fails the first read of
the old path, whenever that read comes, and only that read; a read that already names another
file (the moved one, found by a listing) is run as usual.

Answer contract (revision 5, in the prompt): the reply ends with the line
``ANSWER: <port>``, and only that line is judged (``pytest_agentic.run.answerlines``, its form
and hedge rules): it must hold the port read from the file the error names (``8288``, ``port
8288``, ``8288/tcp``) and nothing else: a note on the line (``8288 (not 8693)``, ``8288 (eighty-eighty
if the old file is live)``, after a dash, a footnote, other words) fails as ``answer_format``,
whatever it says. The rest of the reply is free: above the line it may name the backup's and the
defaults' ports to rule them out. Two ``ANSWER:`` lines that disagree, or one that names a second
port (``8288 or 8693``), is a hedge and fails; no ``ANSWER:`` line fails as ``answer_format``.
"""

from __future__ import annotations

import random

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, ToolFault, task
from pytest_agentic.run import answerlines

_SERVICES = ["billing", "ledger", "gateway", "notifier", "scheduler", "inventory", "search", "profile"]


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_08:{seed}")
    service = rng.choice(_SERVICES)
    port, stale_port, default_port = rng.sample(range(8100, 9899), 3)
    old_path = f"config/{service}.yaml"
    new_dir = rng.choice(["config/v2", "config/deploy", "etc/services"])
    new_path = f"{new_dir}/{service}.yaml"
    workers = rng.randint(2, 16)
    files = {
        new_path: f"service: {service}\nlisten:\n  host: 0.0.0.0\n  port: {port}\nworkers: {workers}\n",
        f"config/{service}.yaml.bak": f"# backup taken before the v2 migration; not in use\nservice: {service}\n"
                                      f"listen:\n  host: 0.0.0.0\n  port: {stale_port}\nworkers: {workers}\n",
        "config/defaults.yaml": f"listen:\n  host: 127.0.0.1\n  port: {default_port}\n",
        "README.md": f"# {service}\n\nRuns behind the load balancer.\n",
    }
    error = (f"{old_path} is no longer read by the service: the configuration moved to {new_path} "
             f"in the v2 migration. Read {new_path} instead.")
    prompt = (f"Which TCP port does the {service} service listen on? Its configuration is in "
              f"`{old_path}`. Read it and reply with the port number. End your reply with the line "
              f"`ANSWER: <port>`, holding that port and no other number. {answerlines.ALONE}")
    read_old = ToolCall("fs_read", {"path": old_path})
    return TaskInstance(
        prompt=prompt,
        files=files,
        tools=("fs_read", "fs_list"),
        expected={"port": port, "wrong_ports": [stale_port, default_port], "new_path": new_path},
        tool_faults={"fs_read": [ToolFault(error, path=old_path)]},  # the read of the old path, and only it
        reference=[read_old, ToolCall("fs_read", {"path": new_path}),
                   Final(f"The {service} service listens on port {port} (from {new_path}).\n\nANSWER: {port}")],
        near_misses={
            # Takes the backup next to the old path instead of the file the error names.
            "stale_backup": [read_old, ToolCall("fs_read", {"path": f"config/{service}.yaml.bak"}),
                             Final(f"The {service} service listens on port {stale_port}.\n\nANSWER: {stale_port}")],
            # Stops at the error.
            "gives_up": [read_old, Final(f"I could not read {old_path}, so I cannot tell the port.\n\nANSWER: unknown")],
            # The right port, hedged with the backup's.
            "hedged": [read_old, ToolCall("fs_read", {"path": new_path}), Final(
                f"It listens on {port}, or possibly on {stale_port} if the old backup is still in use.\n\n"
                f"ANSWER: {port} or {stale_port}")],
            # Reads the right file, then sets its port aside for the backup's.
            "rejects_the_right_port": [read_old, ToolCall("fs_read", {"path": new_path}), Final(
                f"{new_path} says {port}, but that file is not live yet; the service still listens on {stale_port}."
                f"\n\nANSWER: {stale_port}")],
            # Falls back to the shared defaults.
            "defaults": [read_old, ToolCall("fs_read", {"path": "config/defaults.yaml"}),
                         Final(f"It listens on the default port, {default_port}.\nANSWER: {default_port}")],
        },
    )


#: The line's value as written: the port, also ``port 8288``, ``TCP port 8288``, ``8288/tcp``.
_FORM = rf"(?:(?:tcp\s*)?port\s*[:#=]?\s*)?{answerlines.INTEGER}(?:\s*/\s*tcp)?"


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept a reply whose ``ANSWER:`` line gives the configured port, after reading the moved file."""
    expected = instance.expected
    port = expected["port"]
    given = answerlines.integer(run.final_answer or "", "answer", "ANSWER:", _FORM)
    roles = dict(zip(expected["wrong_ports"], ("the backup's", "the defaults'")))
    assert given == port, f"the ANSWER: line gives port {given}" + (f" ({roles[given]})" if given in roles else "")
    # "./config/v2/x.yaml" and "config//v2/x.yaml" name the same file as the error did
    assert expected["new_path"] in run.paths_of("fs_read"), (
        f"the answer was not read from {expected['new_path']}, the file the error pointed to"
    )


@task("task_08", "recover_from_tool_error", build=build, limits={"max_turns": 8})
def test_recover_from_tool_error(agent):
    """The first fs_read fails and names the moved file; recover and answer."""
    run = agent.run()
    check(agent.instance, run)
