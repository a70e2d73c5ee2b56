"""Probes: call functions of the model's code in the sandbox and bring back raw values, never a verdict.

A checker that must know what the model's code does asks for calls (module, function, arguments);
:func:`call_all` runs them in one sandboxed interpreter (``python -I -S``: no ``site``, so no
``sitecustomize``, ``usercustomize`` or ``.pth`` file of the workspace runs, and no environment
variable steers it) and returns what each call returned or raised; asked, it also tells where the called
function comes from (:class:`Origin`), so that :func:`foreign` can say whether the function a file defines is
the one that ran, not a replacement installed from elsewhere. The checker compares those values
with what it expects, in its own process: expected values never enter the box (not in the argument
list, the environment, the input or any file visible inside).

Whatever the model's code does at import time (``atexit``, ``os._exit``, signal handlers, patched
builtins, ``json`` or ``sys.stdout``, printed lines that look like a result) can only make the answer
missing or wrong: the exit status is ignored, exactly one result frame must come back, every value in
it is tagged with its exact type inside the box and checked again here, and an object that is not a
plain value (one whose ``__eq__`` always says yes, say) comes back as :class:`Opaque`, equal to nothing.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any, Literal

from . import sandbox

#: The marker that starts the one line holding the probe's result.
FRAME = "AGENTIC-PROBE-RESULT "
#: Bytes of the probe's stdout read back at most.
MAX_FRAME_BYTES = 512 * 1024

# The shape of a code object and of the code nested in it: everything that decides what it does (bytecode,
# constants, names, its definition's line), not its file name. One text, run in the box (before any model
# code, the builtins it uses bound as defaults) and here alike; iterative, so that it looks up no global.
_SHAPE = r"""
def code_shape(code, _type=type, _repr=repr, _sorted=sorted, _list=list, _hex=bytes.hex, _sets=(frozenset, set),
               _code=type((lambda: 0).__code__)):
    out, todo = [], [code]
    while todo:
        c = todo.pop(0)
        consts = []
        for k in c.co_consts:
            if _type(k) is _code:
                todo.append(k)
                consts.append(["code"])
            else:
                consts.append([_type(k).__name__, _sorted(_repr(v) for v in k) if _type(k) in _sets else _repr(k)])
        out.append([c.co_name, c.co_qualname, c.co_firstlineno, c.co_argcount, c.co_posonlyargcount,
                    c.co_kwonlyargcount, c.co_flags, _hex(c.co_code), _list(c.co_names), _list(c.co_varnames),
                    _list(c.co_freevars), _list(c.co_cellvars), consts])
    return out
"""
_NAMESPACE: dict[str, Any] = {}
exec(_SHAPE, _NAMESPACE)  # noqa: S102 - our own constant text
code_shape = _NAMESPACE["code_shape"]

# Runs as ``python -I -S -c``. Everything the probe itself uses is bound to locals before any model
# code is imported, and the request is read (and stdin closed) before too.
_SCRIPT = r"""
%(shape)s

def _probe():
    import importlib, json, os, sys, traceback
    from types import FunctionType as FunctionType_, ModuleType as ModuleType_
    shape_, vars_, origin = code_shape, vars, False
    request = json.loads(sys.stdin.read())
    sys.stdin.close()
    frame, write, loads, dumps, import_module = %(frame)r, os.write, json.loads, json.dumps, importlib.import_module
    type_, repr_, len_, isinstance_, str_, BaseException_ = type, repr, len, isinstance, str, BaseException
    iter_ = iter
    budget = [20000]

    def tag(value, depth):
        budget[0] -= 1
        t = type_(value)
        if budget[0] < 0 or depth > 30:
            return ["opaque", "too large"]
        if value is None:
            return ["none"]
        if t is bool:
            return ["bool", value is True]
        if t is int:
            return ["int", str_.__str__(int.__repr__(value))]
        if t is float:
            return ["float", float.__repr__(value)]
        if t is str:
            return ["str", str_.__str__(value)]
        if t is list or t is tuple:
            return ["list" if t is list else "tuple", [tag(v, depth + 1) for v in value]]
        if t is dict:
            return ["dict", [[tag(k, depth + 1), tag(v, depth + 1)] for k, v in dict.items(value)]]
        return ["opaque", t.__qualname__ if type_(t.__qualname__) is str else "?"]

    # tracing (trace_all): every instruction a call executes, as (code object, offset); the code objects
    # are kept alive so that no two are ever confused, and mapped to source positions only after the calls
    trace, settrace, gettrace, max_sites = request.get("trace", False), sys.settrace, sys.gettrace, %(max_sites)d
    codes, sites, hits = {}, {}, [set()]

    def local(frame_, event, arg):
        if event == "opcode" and len_(hits[0]) <= max_sites and len_(codes) <= max_sites:
            code = frame_.f_code
            hits[0].add((codes.setdefault(code, len_(codes)), frame_.f_lasti, code))
        return local

    def tracer(frame_, event, arg):
        frame_.f_trace_opcodes = True
        return local

    origin = request.get("origin", False) is True
    sys.path[:0] = request["paths"]
    results = []
    for module, function, args, once in request["calls"]:
        try:
            mod = import_module(module)
            fn = getattr(mod, function, None)
        except BaseException_ as exc:
            results.append(["raised", type_(exc).__name__, "importing %%s: %%s" %% (module, exc)])
            if origin:
                results[-1].append(["none"])
            continue
        if not callable(fn):
            results.append(["missing"])
            continue
        if origin:  # taken before the call: the function that is called
            if type_(fn) is FunctionType_:
                code = fn.__code__
                own = type_(mod) is ModuleType_ and fn.__globals__ is vars_(mod)
                where = ["function", str_.__str__(code.co_filename), code.co_firstlineno, own, shape_(code)]
            else:
                t = type_(fn)
                where = ["other", t.__qualname__ if type_(t.__qualname__) is str else "?"]
        tampered = False
        try:
            args = loads(args)
            for index in once:
                args[index] = iter_(args[index])
            if trace:
                hits[0] = set()
                settrace(tracer)
            try:
                value = fn(*args)
            finally:
                if trace:
                    tampered = gettrace() is not tracer
                    settrace(None)
            results.append(["ok", tag(value, 0)])
        except BaseException_ as exc:
            results.append(["raised", type_(exc).__name__, str_(exc)[:300]])
        if origin:
            results[-1].append(where)
        if trace:
            mine = []
            for index, offset, code in hits[0]:
                positions = sites.setdefault(index, (code, list(code.co_positions())))[1]
                where = positions[offset // 2] if offset // 2 < len_(positions) else (None, None, None, None)
                mine.append([index, where[0] or 0, where[2] or 0])
            results[-1].append("tampered" if tampered else "too many" if len_(hits[0]) > max_sites else mine)
    if trace:
        table = [[str_(code.co_filename)[:200], str_(code.co_qualname)[:200]] for code in codes]
        results.append(["codes", table])
    write(1, ("\n" + frame + dumps(results) + "\n").encode())

_probe()
"""


@dataclass(frozen=True)
class Opaque:
    """A value that was not a plain one (a custom object, or too large): equal to nothing else."""

    type_name: str

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


@dataclass(frozen=True)
class Origin:
    """The function a call called, as the box saw it before the call: a plain function (``kind``
    "function") with its code's file, first line, whether its globals are its module's own, and its
    code's :func:`code_shape`; or some other callable (``kind`` its type's name)."""

    kind: str
    filename: str = ""
    line: int = 0
    own_globals: bool = False
    shape: Any = None


@dataclass(frozen=True)
class Outcome:
    """What one call did: returned ``value``, raised ``error`` (type and message), or found no function."""

    kind: Literal["ok", "raised", "missing"]
    value: Any = None
    error: str = ""
    #: Where the called function comes from, when the probe was asked (``origin=True``) and it was found.
    origin: Origin | None = None

    def shown(self) -> str:
        return {"ok": repr(self.value), "raised": f"raised {self.error}", "missing": "no such function"}[self.kind]


@dataclass(frozen=True)
class OnePass:
    """An argument of a call passed as a one-pass iterator over ``items`` (``iter(items)`` in the box), to
    see whether the code iterates its argument once, as a loop over it does, or more often."""

    items: list[Any] | tuple[Any, ...]


#: One call: module name, function name, positional arguments (JSON values, or :class:`OnePass` of them).
Call = tuple[str, str, Sequence[Any]]


def call_all(root: Path, calls: Sequence[Call], *, paths: Sequence[str] = (".",), timeout: float = 30.0,
             origin: bool = False) -> list[Outcome]:
    """Run ``calls`` in one sandboxed interpreter in ``root`` (``paths`` put first on ``sys.path``); with
    ``origin``, each outcome of a function found also says where that function comes from.

    An AssertionError (a rejection of the run) when no valid result came back: a crash, a timeout,
    no frame or more than one.
    """
    items = _run(root, calls, paths, timeout, trace=False, origin=origin)
    try:
        decoded = [_outcome(item[:-1], _origin(item[-1], root)) if origin and item != ["missing"] else _outcome(item)
                   for item in items]
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise AssertionError(f"the probe's result frame is malformed ({exc})") from None
    if len(decoded) != len(calls):
        raise AssertionError(f"the probe returned {len(decoded)} results for {len(calls)} calls")
    return decoded


#: Distinct instructions one traced call may execute (and code objects a traced run may meet) before its
#: trace is cut off: the functions task_02 traces execute about a hundred.
MAX_SITES = 4000


@dataclass(frozen=True)
class Site:
    """One executed instruction's place: the code object it belongs to (its file and qualified name, and
    an index telling apart code objects that share both, as the code of two ``exec``'d strings may), and
    the line and column where its source begins."""

    code: int
    filename: str
    qualname: str
    line: int
    column: int


@dataclass(frozen=True)
class Traced:
    """One traced call: what it did, and the instructions it executed (None when the trace was cut off:
    more than :data:`MAX_SITES` of them, or the code replaced the tracer)."""

    outcome: Outcome
    sites: frozenset[Site] | None
    cut: str = ""


def trace_all(root: Path, calls: Sequence[Call], *, paths: Sequence[str] = (".",),
              timeout: float = 30.0) -> list[Traced]:
    """Like :func:`call_all`, and trace each call: every instruction of Python code it executes (the
    workspace's modules, code compiled from strings, the standard library's Python code), as raw places
    decoded strictly here. Tracing costs the calls a slowdown of ten times or more; keep them small."""
    items = _run(root, calls, paths, timeout, trace=True)
    try:
        if type(items[-1]) is not list or len(items[-1]) != 2 or items[-1][0] != "codes":
            raise ValueError("no table of code objects")
        codes = [(sandbox.host_path(_text(f), root), _text(q)) for f, q in items[-1][1]]
        out = []
        for item in items[:-1]:
            if item == ["missing"]:
                out.append(Traced(Outcome("missing"), frozenset()))
                continue
            outcome, raw = _outcome(item[:-1]), item[-1]
            if raw in ("tampered", "too many"):
                out.append(Traced(outcome, None, "the code replaced the tracer" if raw == "tampered" else
                                  f"it executed more than {MAX_SITES} distinct instructions"))
                continue
            sites = set()
            for index, line, column in raw:
                if not (type(index) is int and type(line) is int and type(column) is int):
                    raise ValueError(f"not a site: {[index, line, column]!r:.80}")
                sites.add(Site(index, *codes[index], line, column))
            out.append(Traced(outcome, frozenset(sites)))
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise AssertionError(f"the probe's result frame is malformed ({exc})") from None
    if len(out) != len(calls):
        raise AssertionError(f"the probe returned {len(out)} results for {len(calls)} calls")
    return out


def places(code: CodeType) -> int:
    """How many places (distinct source positions, as a :class:`Site` has them) the instructions of
    ``code`` and of the code nested in it stand at: the most a call of it can execute."""
    out, stack = set(), [code]
    while stack:
        c = stack.pop()
        out |= {(c.co_name, line, col) for line, _, col, _ in c.co_positions() if line is not None}
        stack += [k for k in c.co_consts if isinstance(k, CodeType)]
    return len(out)


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError(f"not a string: {value!r:.80}")
    return value


def _run(root: Path, calls: Sequence[Call], paths: Sequence[str], timeout: float, *, trace: bool,
         origin: bool = False) -> list[Any]:
    """The raw items of the one result frame of a probe of ``calls``."""
    request = {"paths": list(paths), "calls": [_encoded(m, f, a) for m, f, a in calls], "trace": trace,
               "origin": origin}
    argv = [sys.executable, "-I", "-S", "-c", _SCRIPT % {"frame": FRAME, "max_sites": MAX_SITES, "shape": _SHAPE}]
    limit = MAX_FRAME_BYTES * (8 if trace else 1)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        done = sandbox.execute(argv, root, timeout=timeout, stdout=out.fileno(), stderr=err.fileno(),
                               stdin=json.dumps(request).encode())
        out.seek(0)
        data = out.read(limit)
        err.seek(0)
        errors = err.read(4000).decode("utf-8", errors="replace")
    frames = [line[len(FRAME):] for line in data.decode("utf-8", errors="replace").split("\n")
              if line.startswith(FRAME)]
    if done.timed_out:
        raise AssertionError(f"the probe of the code timed out after {timeout:g}s")
    if len(frames) != 1:
        what = "no result" if not frames else f"{len(frames)} result frames (a forged one among them)"
        tail = " | ".join(errors.strip().splitlines()[-3:])[:400]
        raise AssertionError(f"the probe of the code returned {what}" + (f": {tail}" if tail else ""))
    try:
        items = json.loads(frames[0])
    except ValueError as exc:
        raise AssertionError(f"the probe's result frame is malformed ({exc})") from None
    if type(items) is not list:
        raise AssertionError("the probe's result frame is malformed (not a list)")
    return items


def _encoded(module: str, function: str, args: Sequence[Any]) -> list[Any]:
    """One call as the box reads it: the arguments as JSON text, and the indices of the one-pass ones."""
    for arg in args:
        if isinstance(arg, OnePass) and type(arg.items) not in (list, tuple):
            raise TypeError(f"a one-pass argument holds a list or tuple, not {type(arg.items).__name__}")
    plain = [list(a.items) if isinstance(a, OnePass) else a for a in args]
    return [module, function, json.dumps(plain), [i for i, a in enumerate(args) if isinstance(a, OnePass)]]


def _outcome(item: Any, origin: Origin | None = None) -> Outcome:
    if type(item) is not list or not item or type(item[0]) is not str:
        raise ValueError(f"not a tagged outcome: {item!r:.80}")
    if item[0] == "ok" and len(item) == 2:
        return Outcome("ok", _value(item[1], 0), origin=origin)
    if item[0] == "raised" and len(item) == 3 and type(item[1]) is str and type(item[2]) is str:
        return Outcome("raised", error=f"{item[1]}: {item[2]}", origin=origin)
    if item == ["missing"]:
        return Outcome("missing")
    raise ValueError(f"unknown outcome {item[0]!r:.40}")


def _value(tagged: Any, depth: int) -> Any:
    """A tagged value from the box as a plain Python value; anything else is a ValueError."""
    if type(tagged) is not list or not tagged or type(tagged[0]) is not str or depth > 40:
        raise ValueError(f"not a tagged value: {tagged!r:.80}")
    kind, rest = tagged[0], tagged[1:]
    if kind == "none" and not rest:
        return None
    if len(rest) != 1:
        raise ValueError(f"bad {kind!r} value")
    body = rest[0]
    if kind == "bool" and type(body) is bool:
        return body
    if kind == "int" and type(body) is str:
        return int(body)
    if kind == "float" and type(body) is str:
        return float(body)
    if kind == "str" and type(body) is str:
        return body
    if kind in ("list", "tuple") and type(body) is list:
        items = [_value(v, depth + 1) for v in body]
        return items if kind == "list" else tuple(items)
    if kind == "dict" and type(body) is list:
        pairs = [(_value(k, depth + 1), _value(v, depth + 1)) for k, v in body]
        return {k: v for k, v in pairs}
    if kind == "opaque" and type(body) is str:
        return Opaque(body[:80])
    raise ValueError(f"bad {kind!r} value")


def _origin(item: Any, root: Path) -> Origin | None:
    """An origin from the box, its file as it is here (the box has the workspace at another path)."""
    if item == ["none"]:
        return None
    if type(item) is list and len(item) == 2 and item[0] == "other" and type(item[1]) is str:
        return Origin(item[1][:80])
    if (type(item) is list and len(item) == 5 and item[0] == "function" and type(item[1]) is str
            and type(item[2]) is int and type(item[3]) is bool and type(item[4]) is list):
        return Origin("function", sandbox.host_path(item[1], root), item[2], item[3], item[4])
    raise ValueError(f"not an origin: {item!r:.80}")


def foreign(root: Path, path: str, function: str, outcomes: Sequence[Outcome]) -> str | None:
    """Why the ``function`` these calls (made with ``origin=True``) called is not the one that the file
    ``path`` of the workspace ``root`` defines, with its code as that file's text compiles, in its module's
    globals; None when it is. A function replaced from elsewhere (a package's ``__init__``, a wrapper, an
    assignment after the ``def``, a forged code object or a crafted ``.pyc``) has another answer."""
    file = (root / path).resolve()
    try:
        module_code = compile(file.read_bytes(), str(file), "exec", dont_inherit=True, optimize=0)
    except (OSError, SyntaxError, ValueError) as exc:
        return f"{path} does not compile ({type(exc).__name__})"
    for origin in {repr(o.origin): o.origin for o in outcomes if o.origin is not None}.values():
        if origin.kind != "function":
            return f"the {function} that is called is a {origin.kind} object, not the function {path} defines"
        called = Path(origin.filename)
        if not called.is_absolute() or called.resolve() != file:
            shown = called.relative_to(root) if called.is_absolute() and called.is_relative_to(root) else called
            return (f"the {function} that is called is defined in {str(shown)[:120]}, not in {path}: the function "
                    f"in {path} must be fixed itself, not replaced from elsewhere")
        defs = [c for c in module_code.co_consts if type(c) is type(module_code) and c.co_name == function
                and c.co_firstlineno == origin.line]
        if not defs:
            return (f"the {function} that is called starts at line {origin.line} of {path}, which holds no "
                    f"definition of {function}: the function {path} defines must be fixed itself")
        if origin.shape != code_shape(defs[0]):
            return f"the {function} that is called does not run the code of its definition in {path} (line {origin.line})"
        if not origin.own_globals:
            return f"the {function} that is called runs in globals other than those of its module {path}"
    return None
