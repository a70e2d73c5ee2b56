"""Keep credentials out of everything the harness writes or shows.

Two nets: values of credential variables in the environment are masked wherever
they appear (:func:`redact`), and parameters whose names mark them as secrets
are masked in what is recorded of a model entry (:func:`redact_secret_keys`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
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
    # OpenTelemetry's exporter headers (OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20...,x-key=...):
    # each header's value is a credential, wherever it shows.
    for name in (n for n in os.environ if n.startswith("OTEL_") and n.endswith("_HEADERS")):
        values.update(part.partition("=")[2].strip() for part in os.environ[name].split(","))
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


#: Words that mark a parameter as a secret (matched against the parts of its name, so that
#: ``max_tokens`` is not one and ``x-api-key`` is).
SECRET_WORDS = {"key", "apikey", "secret", "password", "passwd", "token", "credential", "credentials",
                "authorization", "auth", "cookie", "signature"}
KEY_MASK = "<redacted>"


def is_secret_key(name: str) -> bool:
    parts = re.split(r"[^a-z0-9]+", name.lower())
    return any(p in SECRET_WORDS for p in parts)


def redact_secret_keys(value: Any) -> Any:
    """A copy of ``value`` with the values of secret-looking keys replaced, at any depth."""
    if isinstance(value, Mapping):
        return {k: KEY_MASK if isinstance(k, str) and is_secret_key(k) else redact_secret_keys(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_secret_keys(v) for v in value]
    return value
