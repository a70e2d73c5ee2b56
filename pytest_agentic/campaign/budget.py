"""The campaign's cost budget, shared by every process through an append-only ledger file."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

SKIP_REASON = "campaign budget"


class Ledger:
    """Each finished run appends its cost; any process can read the total spent so far."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls) -> Ledger:
        fd, name = tempfile.mkstemp(prefix="agentic-ledger-", suffix=".txt")
        os.close(fd)
        return cls(Path(name))

    def add(self, cost_usd: float | None) -> None:
        # One short O_APPEND write per run: atomic between processes. A cost that is not a
        # finite non-negative number (an endpoint's nonsense) adds nothing rather than refunding.
        if cost_usd is None or not math.isfinite(cost_usd) or cost_usd < 0:
            cost_usd = 0.0
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{cost_usd or 0.0:.10f}\n".encode())
        finally:
            os.close(fd)

    def spent(self) -> float:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return 0.0
        return sum(float(line) for line in text.split() if line)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def skip_message(budget: float, spent: float) -> str:
    return f"{SKIP_REASON} of ${budget:g} spent (${spent:.6f}); remaining runs skipped"
