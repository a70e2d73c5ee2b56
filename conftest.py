"""Root conftest: the harness's self-tests drive pytest sessions with pytester."""

pytest_plugins = ("pytester",)
