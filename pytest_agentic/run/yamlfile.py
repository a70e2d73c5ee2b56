"""Read a YAML input file, turning a missing file or bad YAML into the caller's own error."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load_yaml(path: Path, error: type[Exception], missing: str) -> Any:
    """The parsed content of ``path``; ``error(f"{path}: ...")`` when it is missing or not YAML."""
    import yaml

    if not path.is_file():
        raise error(f"{path}: {missing}")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from None
