"""What campaign.json records about the environment: machine and package versions."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

#: Distributions whose versions decide what a campaign measured.
PACKAGES = ("pytest-agentic", "litellm", "pytest", "pytest-xdist", "scipy", "jsonschema", "pyyaml", "tabulate")


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
