"""The benchmark harness (``python bench/run.py``); not shipped in the wheel."""
