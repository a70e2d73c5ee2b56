"""The self-tests run strict: every warning is an error (campaign runs are not held to this)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_agentic.run.calls.llm import _IMPORT_NOISE as NOISE

from . import browser

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.filterwarnings("error"))
            # Known leaks outside the test that meets them, collected by whichever test the GC runs in: the
            # sockets of a litellm connection pool that a later in-process session replaced (run/calls/connections.py
            # leaves it to the GC, as closing it breaks clients litellm caches elsewhere) and an asyncio loop
            # litellm's logging worker makes. Every other warning stays an error.
            for leak in ("<socket.socket", "<function BaseEventLoop.__del__"):
                item.add_marker(pytest.mark.filterwarnings(
                    f"ignore:Exception ignored in. {leak}:pytest.PytestUnraisableExceptionWarning"))
            # The pydantic warning litellm raises at its import and at its first completion, which the harness
            # ignores in every session (run.calls.llm.quiet_import_noise, at session start). A test that calls
            # litellm after another test of its process imported it meets it at the first completion.
            item.add_marker(pytest.mark.filterwarnings(f"ignore:{NOISE[0]}:UserWarning:{NOISE[1]}"))


@pytest.fixture(autouse=True)
def _no_github_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """The self-tests' campaigns never append to the job summary of the CI run that tests the harness."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def chromium() -> str:
    """The browser, or a skip saying why (a failure under CI, where .ci/run installs it)."""
    found = browser.chromium()
    if found is None:
        missing = "Debian's chromium is not installed here (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(f"{missing}: CI must run this test")
        pytest.skip(missing)
    return found
