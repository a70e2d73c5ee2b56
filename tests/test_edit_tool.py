"""fs_edit (one exact, unique snippet replaced) and fs_read's line ranges: behaviour, bounds, containment."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentic.run import tools
from pytest_agentic.run.tools import TOOLS, ToolError, Workspace


def invoke(ws: Workspace, name: str, **args):
    return TOOLS[name].call(ws, args)


@pytest.fixture
def sandbox(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET value\n")
    ws = Workspace(tmp_path / "ws")
    ws.populate({"src/app.py": "a = 1\nb = 2\nc = 3\n", "notes.txt": "n\n"})
    os.symlink(outside / "secret.txt", ws.root / "link_to_secret")
    os.symlink(outside, ws.root / "link_dir")
    return ws, outside


# --------------------------------------------------------------------------- fs_edit

_alphabet = st.sampled_from(list("ab \n\tx=()") + ["é", "\r\n"])
_texts = st.lists(_alphabet, max_size=40).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_texts, old=st.lists(_alphabet, min_size=1, max_size=6).map("".join), new=_texts)
def test_edit_replaces_exactly_one_occurrence_or_changes_nothing(tmp_path_factory, text, old, new):
    ws = Workspace(tmp_path_factory.mktemp("edit"))
    (ws.root / "f.txt").write_bytes(text.encode())
    found = text.count(old)
    if found == 1:
        message = invoke(ws, "fs_edit", path="f.txt", old_text=old, new_text=new)
        assert (ws.root / "f.txt").read_bytes() == text.replace(old, new, 1).encode()
        assert message.startswith("edited f.txt")
    else:
        with pytest.raises(ToolError, match="not found" if found == 0 else f"occurs {found} times"):
            invoke(ws, "fs_edit", path="f.txt", old_text=old, new_text=new)
        assert (ws.root / "f.txt").read_bytes() == text.encode()


def test_edit_keeps_every_other_byte(sandbox):
    ws, _ = sandbox
    ws.populate({"crlf.py": "x = 1\r\ny = 2\r\n# no final newline"})
    invoke(ws, "fs_edit", path="crlf.py", old_text="y = 2", new_text="y = 3")
    assert (ws.root / "crlf.py").read_bytes() == b"x = 1\r\ny = 3\r\n# no final newline"


@pytest.mark.parametrize(("args", "message"), [
    ({"path": "missing.py", "old_text": "a", "new_text": "b"}, "no such file"),
    ({"path": "src", "old_text": "a", "new_text": "b"}, "not a regular file"),
    ({"path": "src/app.py", "old_text": "", "new_text": "b"}, "empty"),
    ({"path": "src/app.py", "old_text": "d = 4", "new_text": "b"}, "not found"),
    ({"path": "src/app.py", "old_text": " = ", "new_text": "="}, "occurs 3 times"),
])
def test_edit_errors_name_the_problem_and_change_nothing(sandbox, args, message):
    ws, _ = sandbox
    before = ws.snapshot()
    with pytest.raises(ToolError, match=message):
        invoke(ws, "fs_edit", **args)
    assert ws.snapshot() == before


def test_edit_refuses_binary_and_oversized_results(sandbox):
    ws, _ = sandbox
    ws.populate({"blob.bin": b"\xff\xfe\x00abc"})
    with pytest.raises(ToolError, match="UTF-8"):
        invoke(ws, "fs_edit", path="blob.bin", old_text="abc", new_text="d")
    with pytest.raises(ToolError, match="limit"):
        invoke(ws, "fs_edit", path="src/app.py", old_text="a = 1", new_text="x" * (tools.MAX_WRITE_BYTES + 1))
    assert (ws.root / "src/app.py").read_text() == "a = 1\nb = 2\nc = 3\n"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "/etc/hostname", "link_to_secret",
                                  "link_dir/secret.txt", "src/../../outside/secret.txt", "~/x", "a\x00b"])
def test_edit_outside_is_refused(sandbox, path):
    ws, outside = sandbox
    with pytest.raises(ToolError):
        invoke(ws, "fs_edit", path=path, old_text="TOP-SECRET", new_text="pwned")
    assert (outside / "secret.txt").read_text() == "TOP-SECRET value\n"


_segments = st.sampled_from(["..", ".", "", "src", "app.py", "link_dir", "link_to_secret", "/", "~", "\x00",
                             "secret.txt", "outside", "notes.txt", "a" * 300])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.one_of(_segments, st.text(max_size=8)), min_size=1, max_size=5), absolute=st.booleans())
def test_no_generated_edit_or_ranged_read_escapes(sandbox, parts, absolute):
    ws, outside = sandbox
    path = ("/" if absolute else "") + "/".join(parts)
    for name, args in (("fs_edit", {"path": path, "old_text": "TOP-SECRET", "new_text": "pwned"}),
                       ("fs_read", {"path": path, "start_line": 1, "end_line": 1})):
        try:
            out = invoke(ws, name, **args)
        except ToolError:
            continue
        assert "TOP-SECRET" not in out
    assert (outside / "secret.txt").read_text() == "TOP-SECRET value\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


# --------------------------------------------------------------------------- fs_read ranges

_lines = st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x0b\x0c"
                                                 "\x1c\x1d\x1e\x85\u2028\u2029"), max_size=12),
                  min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(lines=_lines, start=st.integers(1, 35), span=st.one_of(st.none(), st.integers(0, 35)),
       final_newline=st.booleans())
def test_ranged_read_shows_those_lines_and_the_length(tmp_path_factory, lines, start, span, final_newline):
    ws = Workspace(tmp_path_factory.mktemp("read"))
    text = "\n".join(lines) + ("\n" if final_newline else "")
    (ws.root / "f.txt").write_text(text, encoding="utf-8")
    end = None if span is None else start + span
    args = {"path": "f.txt", "start_line": start} if end is None else {"path": "f.txt", "start_line": start,
                                                                        "end_line": end}
    total = len(text.splitlines())
    if start > total:
        with pytest.raises(ToolError, match=f"has {total} lines"):
            invoke(ws, "fs_read", **args)
        return
    out = invoke(ws, "fs_read", **args)
    last = total if end is None else min(end, total)
    wanted = "".join(text.splitlines(keepends=True)[start - 1:last])
    assert out.startswith(wanted)
    if start == 1 and last == total:
        assert out == text
    else:
        assert out.rstrip("\n").endswith(f"[lines {start}-{last} of {total}]")


def test_ranged_read_refuses_bad_ranges(sandbox):
    ws, _ = sandbox
    for args in ({"start_line": 3, "end_line": 2}, {"start_line": 0}, {"start_line": "2"}, {"end_line": True}):
        with pytest.raises(ToolError):
            invoke(ws, "fs_read", path="src/app.py", **args)


def test_big_file_reads_are_cut_and_say_the_length(sandbox):
    ws, _ = sandbox
    line = "y" * 99 + "\n"
    count = 3 * tools.MAX_READ_BYTES // len(line)
    (ws.root / "big.txt").write_text(line * count)
    whole = invoke(ws, "fs_read", path="big.txt")
    assert len(whole) < tools.MAX_READ_BYTES + 300 and f"has {count} lines" in whole
    ranged = invoke(ws, "fs_read", path="big.txt", start_line=10)
    assert len(ranged) < tools.MAX_READ_BYTES + 300 and f"of {count} shown" in ranged
    tail = invoke(ws, "fs_read", path="big.txt", start_line=count - 1)
    assert tail == line * 2 + f"[lines {count - 1}-{count} of {count}]"


def test_schemas_offer_the_new_arguments():
    read = TOOLS["fs_read"].schema()["function"]["parameters"]
    assert set(read["properties"]) == {"path", "start_line", "end_line"} and read["required"] == ["path"]
    edit = TOOLS["fs_edit"].schema()["function"]["parameters"]
    assert edit["required"] == ["path", "old_text", "new_text"]
