"""A browser's default limits for tool calls (a module of its own: ``launch()`` names them before the rest of the
browser stack is imported)."""

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_MAX_RESULT_CHARS"]

DEFAULT_CALL_TIMEOUT = 30.0
"""Seconds a tool call may run before it fails with ``ToolTimeoutError``."""

DEFAULT_MAX_RESULT_CHARS = 4_000_000
"""Results longer than this (characters of JSON text) fail with ``ResultTooLargeError``."""
