"""Keep credentials out of everything the harness writes or shows."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

#: Environment variable names that hold credentials.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH", re.I)
#: Shorter values are not treated as secrets (they would redact ordinary words).
MIN_SECRET_LENGTH = 8
MASK = "[REDACTED]"


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def secret_values(extra_names: Iterable[str] = ()) -> list[str]:
    """Values of the credential variables in the environment, longest first."""
    names = {n for n in os.environ if is_secret_name(n)} | set(extra_names)
    values = {os.environ.get(n, "") for n in names}
    return sorted((v for v in values if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def redact(value: Any, secrets: list[str]) -> Any:
    """``value`` with every secret replaced by a mask; dicts and lists are copied."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return value
    if isinstance(value, dict):
        return {k: redact(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v, secrets) for v in value)
    return value
