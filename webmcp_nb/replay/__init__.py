"""Replays of a recorded session: its tool calls again on a live page, or its agent turns re-driven from the
recorded model replies, with every divergence reported.

Uses: core, browser, recording, agent, mcp.
"""
