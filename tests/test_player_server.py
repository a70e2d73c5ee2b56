"""The players' endpoint (tests/player_server.py): a run played by hand goes through the real path.

A thread stands in for the player: it reads each request the server wrote and leaves a reply, a tool
call first and then an answer; the run goes through litellm, the agent loop and the tools, and what the
player saw is what the model would have seen.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from pytest_agentic.run.agent import run_agent
from pytest_agentic.run.limits import Limits
from pytest_agentic.run.models import ModelEntry
from pytest_agentic.run.tools import Workspace, get_tools

from .player_server import PlayerServer, main, pending, show


def _player(folder: Path, replies: list[list[str]], seen: list[str]) -> None:
    for args in replies:
        deadline = time.monotonic() + 30
        while not pending(folder) and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.append(show(folder, pending(folder)[0]))
        assert main(["reply", "--dir", str(folder), *args]) == 0


def test_a_run_played_by_hand_reaches_the_tools_and_ends_with_the_players_answer(tmp_path):
    folder = tmp_path / "play"
    folder.mkdir()
    server = PlayerServer(folder, 0, wait_s=30)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("the port is 8259\n")
    seen: list[str] = []
    player = threading.Thread(target=_player, args=(folder, [
        ["--call", "fs_read", json.dumps({"path": "notes.txt"})],
        ["--text", "Read it.\n\nANSWER: 8259"]], seen))
    player.start()
    try:
        entry = ModelEntry(name="player", model="openai/player",
                           price={"input_per_token": 0.0, "output_per_token": 0.0})
        result = run_agent(entry=entry, api_base=f"http://127.0.0.1:{port}/v1", prompt="Find the port.",
                           system="", workspace=Workspace(tmp_path / "ws"), tools=get_tools(["fs_read"]),
                           limits=Limits(max_turns=4, max_seconds=60, max_retries=0, request_timeout_s=30),
                           metadata={})
    finally:
        player.join(30)
        server.shutdown()
        server.server_close()
    assert "a NEW run" in seen[0] and "Find the port." in seen[0] and "fs_read" in seen[0]
    assert "the port is 8259" in seen[1]
    assert result.final_answer is not None and result.final_answer.endswith("ANSWER: 8259")
    assert [c["name"] for c in result.tool_calls] == ["fs_read"]
    assert json.loads((folder / "req-0001.json").read_text())["messages"][-1]["content"] == "Find the port."


def test_models_yaml_points_at_the_server(tmp_path):
    from .player_server import models_yaml
    import yaml
    entry = yaml.safe_load(models_yaml(8931))["models"]["player"]
    assert entry["api_base"] == "http://127.0.0.1:8931/v1" and entry["limits"]["max_retries"] == 0
