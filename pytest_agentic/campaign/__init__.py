"""A campaign: run records gathered by the controller and written as a folder.

The writer (``writer``), the tables and summaries (``tables``, ``summary``), the
statistics they use (``stats``), provenance, the budget ledger shared across xdist
workers (``budget``), the failure-mode cache behind ``pytest -m <mode>`` (``modecache``),
and reading a stored campaign back (``stored``, ``resume``). Imports only ``run``.
"""
