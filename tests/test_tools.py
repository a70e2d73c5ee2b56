"""Tool containment: nothing a tool is asked reaches outside the run's workspace."""

from __future__ import annotations

import os
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentic.run import tools
from pytest_agentic.run.tools import TOOLS, ToolError, Workspace


@pytest.fixture
def sandbox(tmp_path):
    """A workspace with a secret file beside it and links planted inside that lead out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET")
    root = tmp_path / "ws"
    ws = Workspace(root)
    ws.populate({"src/app.py": "print('hi')\n", "notes.txt": "n\n"})
    os.symlink(outside / "secret.txt", root / "link_to_secret")
    os.symlink(outside, root / "link_dir")
    os.symlink("/etc", root / "src" / "etc")
    return ws, outside


def invoke(ws, name, **args):
    return TOOLS[name].call(ws, args)


@pytest.mark.parametrize("path", ["../outside/secret.txt", "/etc/passwd", "src/../../outside/secret.txt",
                                  "link_to_secret", "link_dir/secret.txt", "src/etc/hostname", "~/x",
                                  "notes.txt\x00.png"])
def test_reads_outside_are_refused(sandbox, path):
    ws, _ = sandbox
    with pytest.raises(ToolError):
        invoke(ws, "fs_read", path=path)


@pytest.mark.parametrize("path", ["../outside/new.txt", "/tmp/agentic-escape.txt", "link_to_secret",
                                  "link_dir/secret.txt", "link_dir/new.txt", "src/etc/agentic-x"])
def test_writes_outside_are_refused_and_change_nothing(sandbox, path):
    ws, outside = sandbox
    with pytest.raises(ToolError):
        invoke(ws, "fs_write", path=path, content="pwned")
    assert (outside / "secret.txt").read_text() == "TOP-SECRET"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert not os.path.exists("/tmp/agentic-escape.txt")


def test_list_does_not_follow_links_out(sandbox):
    ws, _ = sandbox
    listing = invoke(ws, "fs_list")
    assert "secret.txt" not in listing
    assert "src/app.py" in listing
    with pytest.raises(ToolError):
        invoke(ws, "fs_list", path="link_dir")


def test_huge_write_is_refused_and_huge_read_is_cut(sandbox):
    ws, _ = sandbox
    with pytest.raises(ToolError, match="limit"):
        invoke(ws, "fs_write", path="big.txt", content="x" * (tools.MAX_WRITE_BYTES + 1))
    (ws.root / "big.bin").write_bytes(b"y" * (tools.MAX_READ_BYTES * 4))
    text = invoke(ws, "fs_read", path="big.bin")
    assert len(text) < tools.MAX_READ_BYTES + 200
    assert "cut" in text


def test_sql_is_read_only(sandbox, tmp_path):
    ws, outside = sandbox
    conn = sqlite3.connect(ws.root / "app.db")
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.execute("INSERT INTO t VALUES (1), (2)")
    conn.commit()
    conn.close()
    assert invoke(ws, "sql_query", database="app.db", query="SELECT sum(x) AS s FROM t") == "s\n3"
    for query in ["DELETE FROM t", "DROP TABLE t", "INSERT INTO t VALUES (3)", "CREATE TABLE u (y)",
                  f"ATTACH DATABASE '{outside / 'evil.db'}' AS evil", "PRAGMA journal_mode=DELETE",
                  "VACUUM INTO 'copy.db'"]:
        with pytest.raises(ToolError):
            invoke(ws, "sql_query", database="app.db", query=query)
    assert invoke(ws, "sql_query", database="app.db", query="SELECT count(*) AS n FROM t") == "n\n2"
    assert not (outside / "evil.db").exists()
    assert not (ws.root / "copy.db").exists()
    with pytest.raises(ToolError):
        invoke(ws, "sql_query", database="link_dir/secret.txt", query="SELECT 1")


def test_run_tests_reports_results_and_refuses_options(sandbox):
    ws, _ = sandbox
    ws.populate({"test_ok.py": "def test_ok():\n    assert 1 + 1 == 2\n"})
    out = invoke(ws, "run_tests", path="test_ok.py")
    assert "1 passed" in out and "[exit code 0]" in out
    with pytest.raises(ToolError):
        invoke(ws, "run_tests", path="--rootdir=/")
    with pytest.raises(ToolError):
        invoke(ws, "run_tests", path="../outside")


def test_run_tests_that_hang_or_flood_are_bounded(sandbox):
    ws, _ = sandbox
    ws.tool_timeout = 3
    ws.populate({"test_hang.py": "import time\ndef test_hang():\n    time.sleep(60)\n",
                 "test_flood.py": "def test_flood():\n    while True:\n        print('x' * 1000)\n"})
    hang = invoke(ws, "run_tests", path="test_hang.py")
    assert "timed out after 3s" in hang
    flood = invoke(ws, "run_tests", path="test_flood.py")
    assert len(flood) <= tools.MAX_OUTPUT_BYTES + 200


def test_subprocesses_do_not_see_credentials(sandbox, monkeypatch):
    ws, _ = sandbox
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-secret")
    ws.populate({"test_env.py": "import os\ndef test_env():\n    print(sorted(os.environ))\n"
                                "    assert 'OPENAI_API_KEY' not in os.environ\n"})
    assert "1 passed" in invoke(ws, "run_tests", path="test_env.py")


_segments = st.sampled_from(["..", ".", "", "src", "link_dir", "link_to_secret", "src/etc", "/", "~", "\x00",
                             "secret.txt", "outside", "notes.txt", "a" * 300])


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.one_of(_segments, st.text(max_size=12)), min_size=1, max_size=6),
       absolute=st.booleans())
def test_no_generated_path_escapes(sandbox, parts, absolute):
    ws, outside = sandbox
    path = ("/" if absolute else "") + "/".join(parts)
    for name, args in (("fs_read", {"path": path}), ("fs_list", {"path": path}),
                       ("fs_write", {"path": path, "content": "pwned"})):
        try:
            invoke(ws, name, **args)
        except ToolError:
            pass
    assert (outside / "secret.txt").read_text() == "TOP-SECRET"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    resolved = os.path.realpath(ws.root / path.replace("\x00", "")) if "\x00" not in path else None
    if resolved and os.path.exists(resolved) and not absolute:
        # Whatever exists there and was reachable must be inside the workspace or refused.
        try:
            ws.resolve(path)
        except ToolError:
            return
        assert resolved == str(ws.root) or resolved.startswith(str(ws.root) + os.sep)


_sql_fragments = st.sampled_from([
    "SELECT * FROM t", "DELETE FROM t", "DROP TABLE t", "INSERT INTO t VALUES (9)", "UPDATE t SET x = 0",
    "ATTACH DATABASE 'escape.db' AS e", "ATTACH DATABASE '../outside/evil.db' AS e", "CREATE TABLE e (y)",
    "PRAGMA writable_schema = 1", "VACUUM INTO '../outside/copy.db'", "SELECT load_extension('x')",
    "REPLACE INTO t VALUES (1)", "BEGIN", "COMMIT", ";", "--", "/*", "'", "\x00", "WITH RECURSIVE c(n) AS (SELECT 1)",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.one_of(_sql_fragments, st.text(max_size=10)), min_size=1, max_size=4))
def test_no_generated_sql_writes_or_escapes(sandbox, parts):
    ws, outside = sandbox
    db = ws.root / "app.db"
    if not db.exists():
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE t (x INTEGER)")
        conn.execute("INSERT INTO t VALUES (1), (2)")
        conn.commit()
        conn.close()
    before = db.read_bytes()
    try:
        invoke(ws, "sql_query", database="app.db", query=" ".join(parts))
    except ToolError:
        pass
    assert db.read_bytes() == before
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert not (ws.root / "escape.db").exists()
