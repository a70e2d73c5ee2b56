"""The harness version, recorded in every campaign (one place, read by the package and the writer)."""

__version__ = "0.1.0"
