"""Sessions: every event written as it happens (JSONL, secrets left out, evidence screenshots), and the report that
renders one.

Uses: core, link.
"""
