"""What campaign.json records about the environment, and how secrets are kept out of it."""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Mapping
from typing import Any

#: Distributions whose versions decide what a campaign measured.
PACKAGES = ("pytest-agentic", "litellm", "pytest", "pytest-xdist", "scipy", "jsonschema", "pyyaml", "tabulate")
#: Words that mark a parameter as a secret (matched against the parts of its name).
SECRET_WORDS = {"key", "apikey", "secret", "password", "passwd", "token", "credential", "credentials",
                "authorization", "auth", "cookie", "signature"}
REDACTED = "<redacted>"


def is_secret(name: str) -> bool:
    parts = re.split(r"[^a-z0-9]+", name.lower())
    return any(p in SECRET_WORDS for p in parts)


def redact(value: Any) -> Any:
    """A copy of ``value`` with the values of secret-looking keys replaced, at any depth."""
    if isinstance(value, Mapping):
        return {k: REDACTED if isinstance(k, str) and is_secret(k) else redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value


def packages() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def machine() -> dict[str, Any]:
    return {
        "os": platform.platform(),
        "system": platform.system(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "python_executable": sys.executable,
        "processor": platform.machine(),
        "cpu_count": os.cpu_count(),
    }
