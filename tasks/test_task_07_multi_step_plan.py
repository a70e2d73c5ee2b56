"""task_07 multi_step_plan: four file writes with given content, in a given order.

Measures whether a model holds a prescribed plan: every step done, in order,
with the exact content, using only the tool it was given.

Answer contract (in the prompt): the four files with exactly the given content,
first written in the given order (rewriting one later is allowed; a path may be
spelt "./notes/a.txt"), then a non-empty summary in any form.
"""

from __future__ import annotations

import random

from pytest_agentic import Final, RunResult, TaskInstance, ToolCall, task

_WORDS = ["alpha", "bravo", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo",
          "juniper", "kestrel", "lumen", "maple", "nectar", "onyx", "pylon", "quartz", "raven"]
_DIRS = ["notes", "deploy", "config", "release", "docs", "plan"]


def build(seed: int) -> TaskInstance:
    rng = random.Random(f"task_07:{seed}")
    folder = rng.choice(_DIRS)
    names = rng.sample(_WORDS, 4)
    steps = []
    for i, name in enumerate(names, start=1):
        value = rng.randint(100, 999)
        steps.append((f"{folder}/step{i}_{name}.txt", f"{name.upper()}={value}\n"))
    plan = "\n".join(
        f"{i}. Write the file `{path}` with exactly this content (one line, ending in a newline): {content.strip()}"
        for i, (path, content) in enumerate(steps, start=1)
    )
    prompt = (
        "Carry out this plan step by step, in this order, using the fs_write tool. "
        "Do not skip, merge or reorder steps.\n\n"
        f"{plan}\n\n"
        "When all four files are written, reply with a one-line summary of what you did."
    )
    writes = [ToolCall("fs_write", {"path": p, "content": c}) for p, c in steps]
    done = Final("Wrote the four files in order: " + ", ".join(p for p, _ in steps) + ".")
    return TaskInstance(
        prompt=prompt,
        files={"README.md": "Workspace for the multi-step plan task.\n"},
        tools=("fs_write",),
        expected={"steps": steps},
        reference=[*writes, done],
        near_misses={
            # Does the work, but not in the order asked.
            "reordered": [writes[1], writes[0], writes[2], writes[3], done],
            # Stops one step short and still reports success.
            "skipped_last_step": [*writes[:3], done],
            # Every step, but the third value mistyped.
            "wrong_content": [
                *writes[:2],
                ToolCall("fs_write", {"path": steps[2][0], "content": steps[2][1].replace("=", " = ")}),
                writes[3],
                done,
            ],
        },
    )


def check(instance: TaskInstance, run: RunResult) -> None:
    """Accept the run when the four files hold the given content, written once each, in order."""
    steps = instance.expected["steps"]
    assert run.workspace is not None
    for path, content in steps:
        target = run.workspace / path
        assert target.is_file(), f"step file {path} was not written"
        # exactly: the bytes, so a CRLF line end or a byte-order mark is another content
        assert target.read_bytes() == content.encode(), f"{path} does not hold the content asked for"
    # "./notes/a.txt" and "notes//a.txt" name the file notes/a.txt
    order = [p for p in run.paths_of("fs_write") if p in {s for s, _ in steps}]
    first_writes = list(dict.fromkeys(order))
    assert first_writes == [p for p, _ in steps], f"files were written in the order {first_writes}"
    assert run.final_answer and run.final_answer.strip(), "no summary was given"


@task("task_07", "multi_step_plan", build=build, limits={"max_turns": 12})
def test_multi_step_plan(agent):
    """Four file writes with given content, in order, fs_write only."""
    run = agent.run()
    check(agent.instance, run)
