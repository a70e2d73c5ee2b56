"""task_08 recover_from_tool_error: the first read fails with an error that names the way out.

Measures whether a model reads a tool error and acts on it (one failed call,
one corrected call, then the answer) instead of giving up, guessing, or
answering from a stale file that happens to be nearby.

Answer contract (follows from the prompt): the port read from the file the
error names, given as the answer. The answer is judged by its claim: it may
name the backup's and the defaults' ports to rule them out or as context ("the
.bak file (8589) is a backup"), use Markdown or put the port first or last;
giving another port as the port ("listens on 8589", "Answer: 8589"), offering
one as an alternative ("or maybe 8589"), or naming several without giving one
of them as the port, fails.
"""

from __future__ import annotations

import random
import re

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task
from pytest_agentic.run.answers import final_claim, mentions, outside_code, plain, sets_aside

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
              f"`{old_path}`. Read it and reply with the port number.")
    read_old = ToolCall("fs_read", {"path": old_path})
    return TaskInstance(
        prompt=prompt,
        files=files,
        tools=("fs_read", "fs_list"),
        expected={"port": port, "wrong_ports": [stale_port, default_port], "new_path": new_path},
        tool_faults={"fs_read": [error]},
        reference=[read_old, ToolCall("fs_read", {"path": new_path}),
                   Final(f"The {service} service listens on port {port} (from {new_path}).")],
        near_misses={
            # Takes the backup next to the old path instead of the file the error names.
            "stale_backup": [read_old, ToolCall("fs_read", {"path": f"config/{service}.yaml.bak"}),
                             Final(f"The {service} service listens on port {stale_port}.")],
            # Stops at the error.
            "gives_up": [read_old, Final(f"I could not read {old_path}, so I cannot tell the port.")],
            # The right port, hedged with the backup's.
            "hedged": [read_old, ToolCall("fs_read", {"path": new_path}), Final(
                f"It listens on {port}, or possibly on {stale_port} if the old backup is still in use.")],
            # Reads the right file, then sets its port aside for the backup's.
            "rejects_the_right_port": [read_old, ToolCall("fs_read", {"path": new_path}), Final(
                f"{new_path} says {port}, but that file is not live yet; the service still listens on {stale_port}.")],
            # Falls back to the shared defaults.
            "defaults": [read_old, ToolCall("fs_read", {"path": "config/defaults.yaml"}),
                         Final(f"It listens on the default port, {default_port}.")],
        },
    )


#: A number written as a port: "port 8080", "port: 8080", "0.0.0.0:8080".
_PORT_AFTER = re.compile(r"\bport\b[^\d\n]{0,12}?(?<![\w.])(\d{4,5})\b|(?<=[\w\]]):(\d{4,5})\b", re.IGNORECASE)


#: Words before a number that give it as the service's port: "listens on 8541", "the port is 8541",
#: "uses 8541", "Answer: 8541", "it's 8541".
_CLAIM_BEFORE = re.compile(
    r"(?:\b(?:listen(?:s|ing)?|runs?|running|serves?|serving|bound|binds?|uses?|using|answer|it(?:'s| is)|so|"
    r"port (?:is|would be|will be|number is))\b|[=\u2192]|->)[^\d\n]{0,30}$", re.IGNORECASE)
#: Words before a number that put its clause in another time or mood: "used to listen on", "would listen on".
_PAST = re.compile(r"\b(?:used to|previously|formerly|before|until|was|were|had|would|could|might|if|when|once)\b",
                   re.IGNORECASE)
#: Words after a number that give it as the port: "8541 is the port", "8157 is the actual port".
_CLAIM_AFTER = re.compile(r"^\s*(?:is|was)\s+(?:the|its)\s+(?:\w+\s+){0,2}?port\b", re.IGNORECASE)


def claimed_ports(answer: str, known: set[int]) -> tuple[set[int], set[int], set[int], set[int]]:
    """(asserted, given as the port, set aside, hedged towards): the ports an answer names and how.

    Asserted: named and not set aside. Given as the port: asserted with words that make it the
    answer ("listens on", "the port is", "Answer:", alone on its line). Another port that is
    only named (8157 in "the .bak file (8157) is a backup") is context, not a claim.
    """
    text = plain(answer)
    candidates = set(known) | {n for a, b in _PORT_AFTER.findall(text) if 1024 <= (n := int(a or b)) <= 65535}
    # any number a port could be that the answer offers as an alternative or states as the result
    candidates |= {m.value for m in mentions(answer) if (m.hedged or m.stated) and 1024 <= m.value <= 65535}
    alone = {int(n) for n in re.findall(r"^\W*(?:port|answer)?\W*(\d{4,5})(?:/tcp)?\W*$", text,
                                         re.IGNORECASE | re.MULTILINE)}
    asserted, given, aside, hedged = set(), set(), set(), set()
    negated = [m.rejected for m in mentions(answer, candidates, describing_words=False)]
    for m, denied in zip(mentions(answer, candidates), negated):
        if m.hedged:  # "or possibly 8589 if the old backup is live" offers it, described or not
            hedged.add(m.value)
        at = re.search(rf"(?<!\d){m.value}(?!\d)", m.clause)
        before, after = (m.clause[:at.start()], m.clause[at.end():]) if at else ("", "")
        # "listens on 8589 according to the backup", "uses 8720 because defaults win": given as the port
        # by the clause's own verb, only described after it, and not said of another file or time
        claimed = (_CLAIM_BEFORE.search(before) and not sets_aside(before)
                   and not _PAST.search(before))
        if m.rejected and (denied or not claimed):
            aside.add(m.value)
            continue
        asserted.add(m.value)
        if m.hedged or m.stated or m.value in alone or _CLAIM_BEFORE.search(before) or _CLAIM_AFTER.match(after):
            given.add(m.value)
    return asserted, given, aside, hedged


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept an answer that claims the configured port (and no other), after reading the moved file.

    The answer may name the backup's and the defaults' ports to rule them out or as context; it
    must not give one of them (or any other port) as the port, nor offer one as an alternative,
    nor name several ports without giving one of them as the port. The answer is what follows a
    reasoning block; files quoted in code blocks are evidence when the prose gives the port.
    """
    expected = instance.expected
    port = expected["port"]
    answer = final_claim(run.final_answer or "")  # what follows a reasoning block
    known = {port, *expected["wrong_ports"]}
    if port in claimed_ports(outside_code(answer), known)[0]:
        answer = outside_code(answer)  # the files it quotes in code blocks are evidence, not its claim
    asserted, given, aside, hedged = claimed_ports(answer, known)
    others = sorted(given - {port}) or ([] if port in given else sorted(asserted - {port}))
    assert port in asserted, (
        f"the answer does not give port {port} as the answer"
        + (" (it names it only to set it aside)" if port in aside else "")
        + (f"; it gives {others}" if others else ""))
    assert not others, f"the answer also gives port(s) {others} as the port"
    alternatives = sorted(hedged - {port})
    assert not alternatives, f"the answer hedges between port {port} and {alternatives}"
    # "./config/v2/x.yaml" and "config//v2/x.yaml" name the same file as the error did
    assert expected["new_path"] in run.paths_of("fs_read"), (
        f"the answer was not read from {expected['new_path']}, the file the error pointed to"
    )


@task("task_08", "recover_from_tool_error", build=build, limits={"max_turns": 8})
def test_recover_from_tool_error(agent):
    """The first fs_read fails and names the moved file; recover and answer."""
    run = agent.run()
    check(agent.instance, run)
