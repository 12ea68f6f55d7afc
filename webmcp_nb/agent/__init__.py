"""The agent loop over any OpenAI-compatible endpoint: model I/O shaped by provider quirks, page tools as function
specs, confirmations, limits.

Uses: core, link, browser, recording.
"""
