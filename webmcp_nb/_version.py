"""The one place the version is written: pyproject.toml reads it, and a test checks the extension's manifest."""

__version__ = "0.1.0"
