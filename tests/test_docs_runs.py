"""The docs' examples that can run here, run: the getting-started block marked runnable, the
README's three steps against a local OpenAI-compatible endpoint, and the writing-a-task example."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .docs_pages import BIN, DOCS, ROOT, RUNNABLE_BLOCKS, Block, blocks, commands, logical_lines
from .fault_server import FaultServer
from .helpers import load_task_module


# ---------------------------------------------------------------- commands that run here


def project_copy(folder: Path) -> Path:
    """The benchmark as a user's checkout has it: tasks, models.yaml and the ini options."""
    shutil.copytree(ROOT / "tasks", folder / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("models.yaml", "pyproject.toml"):
        shutil.copy(ROOT / name, folder / name)
    return folder


def run_shown(words: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", *words[1:]] if words[0] == "pytest" else [str(BIN / words[0]), *words[1:]]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})



def expected_exit(block: Block, words: list[str]) -> int:
    line = next(raw for raw in logical_lines(block.body) if shlex.split(raw, comments=True)[:len(words)] == words)
    said = re.search(r"#.*\bexits? (\d)\b", line)
    return int(said.group(1)) if said else 0


def test_runnable_blocks_are_marked():
    assert RUNNABLE_BLOCKS, "no block of the docs is marked runnable"
    shown = [words for block in RUNNABLE_BLOCKS for words in commands(block)]
    assert ["pytest", "--model", "oracle", "-m", "task_09"] in shown
    assert ["pytest", "--help"] in shown


@pytest.mark.parametrize("block", RUNNABLE_BLOCKS, ids=lambda b: b.where)
def test_runnable_commands_run_as_the_docs_say(block, tmp_path):
    folder = project_copy(tmp_path)
    outputs = []
    for words in commands(block):
        done = run_shown(words, folder)
        want = expected_exit(block, words)
        assert done.returncode == want, f"{block.where}: {' '.join(words)} exited {done.returncode}, the docs " \
                                        f"say {want}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        outputs.append((words, done.stdout))
    for words, out in outputs:
        if words[:2] == ["pytest", "--model"]:
            assert f"{words[2]}:" in out and "judged" in out, out[-2000:]
        if words[0] == "agentic-leaderboard":
            ran = {w[2] for w, _ in outputs if w[:2] == ["pytest", "--model"]}
            assert ran and all(f"| {name} " in out for name in ran), out
        if words == ["pytest", "--help"]:
            assert "agent evaluation" in out and "CI gates" in out


class _KeyedServer(FaultServer):
    """A local OpenAI-compatible endpoint that plays scripted solutions and records the keys it was sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.auth: set[str] = set()
        super().__init__(*args, **kwargs)

    def reply(self, body: dict[str, Any], auth: str) -> dict[str, Any]:
        self.auth.add(auth)
        return super().reply(body, auth)


def test_readme_three_steps_end_to_end(tmp_path):
    """README's entry, with api_base pointed at a local OpenAI-compatible endpoint that plays task_09's
    reference solution: the key reaches the endpoint from api_key_env, and the campaign folder is where
    step 3 says, holding what it names."""
    readme = ROOT / "README.md"
    entry_block, = [b for b in blocks(readme) if b.info == "yaml"]
    run_block, = [b for b in blocks(readme) if b.info == "bash"]
    run_words, = commands(run_block)
    entry = yaml.safe_load(entry_block.body)["models"]
    (name, spec), = entry.items()
    folder = project_copy(tmp_path)
    instance = load_task_module(ROOT / "tasks" / "test_task_09_know_when_to_stop.py").build(0)
    with _KeyedServer({instance.prompt: instance.reference}) as server:
        local = {**spec, "api_base": server.api_base}
        models = yaml.safe_load((folder / "models.yaml").read_text())
        models["models"][name] = local
        (folder / "models.yaml").write_text(yaml.safe_dump(models, sort_keys=False))
        # Without the key: the session stops before any run, naming the variable.
        bare = {k: v for k, v in os.environ.items() if k != spec["api_key_env"]}
        missing = subprocess.run([sys.executable, "-m", "pytest", *run_words[1:], "-m", "task_09", "--runs", "1"],
                                 cwd=folder, capture_output=True, text=True, timeout=300, env=bare)
        assert missing.returncode != 0 and spec["api_key_env"] in missing.stdout + missing.stderr
        assert server.calls == 0
        done = run_shown([*run_words, "-m", "task_09", "--runs", "1"], folder,
                         {spec["api_key_env"]: "sk-readme-test"})
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert server.calls >= 1 and server.auth == {"Bearer sk-readme-test"}
    campaign, = (folder / "agentic-results").iterdir()
    assert re.fullmatch(rf"\d{{8}}-\d{{6}}-{re.escape(name)}", campaign.name), campaign.name
    step3 = next(line for line in readme.read_text().splitlines() if "agentic-results/<YYYYMMDD-HHMMSS>-" in line)
    assert f"-{name}/`" in step3
    for artefact in re.findall(r"`([\w.]+\.(?:md|html|jsonl))`", readme.read_text().split("3. Read the results")[1]
                               .split("\n\n")[0]):
        assert (campaign / artefact).is_file(), artefact
    assert "1/1" in (campaign / "summary.md").read_text()
    assert "sk-readme-test" not in "".join(p.read_text(errors="replace") for p in campaign.rglob("*") if p.is_file())


def test_the_task_example_runs_as_the_page_says(pytester):
    """docs/writing-a-task.md's example task, as a user's own test file: the oracle passes it, the
    near-miss fails it as wrong_answer, and the items are named and marked as the page says."""
    page = DOCS / "writing-a-task.md"
    example, = [b for b in blocks(page) if b.info == "python"]
    pytester.makefile(".yaml", models="models:\n  oracle: {model: agentic-scripted/oracle}\n"
                                      "  near-miss: {model: agentic-scripted/near-miss}\n")
    pytester.makepyfile(test_mine=example.body)
    marker = re.search(r"marks it `(\w+)`", page.read_text()).group(1)
    item = re.search(r"\(`(test_\w+\[oracle-run1\])`\)", page.read_text()).group(1)
    passed = pytester.runpytest_subprocess("--strict-markers", "-v", "-m", marker, "--model", "oracle",
                                           "--agentic-out=out")
    passed.assert_outcomes(passed=3)
    assert f"test_mine.py::{item} PASSED" in passed.stdout.str()
    failed = pytester.runpytest_subprocess("--strict-markers", "-m", marker, "--model", "near-miss",
                                           "--agentic-out=out2")
    failed.assert_outcomes(failed=3)
    assert {r["failure_mode"] for r in json_lines(next((pytester.path / "out2").iterdir()) / "runs.jsonl")} \
        == {"wrong_answer"}


def json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]
