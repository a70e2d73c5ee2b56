"""The self-tests run strict: every warning is an error (campaign runs are not held to this)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from . import browser

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.filterwarnings("error"))


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
