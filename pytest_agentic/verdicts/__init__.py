"""What is said about a finished campaign: comparison, gates, predictions, leaderboard, rescoring.

``wiring.Verdicts`` gathers one session's verdicts; each concept has its own module,
usable without a pytest session (``python -m pytest_agentic.verdicts.compare``,
``agentic-leaderboard``). Imports ``campaign`` and ``run``, never the integration above.
"""
