"""``python -m pytest_agentic.report DIR...``: the same as ``agentic-report``."""

from .cli import main

raise SystemExit(main())
