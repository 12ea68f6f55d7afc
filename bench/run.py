"""Runs the benchmark: ``python bench/run.py [--quick] [--json PATH] [--iterations N]``, or the MCP benchmark with
``--mcp`` first (``python bench/run.py --mcp [--quick] [--runs N] ...``); see bench/README.md."""

import sys
from pathlib import Path

# The repository's root instead of bench/ (the harness is not part of the installed package, and bench/mcp.py
# must not stand in for the MCP SDK's ``mcp``).
sys.path[0] = str(Path(__file__).resolve().parents[1])


def _main() -> int:
    if sys.argv[1:2] == ["--mcp"]:
        from bench.mcp import main

        return main(sys.argv[2:])
    from bench.harness import main as harness

    return harness()


raise SystemExit(_main())
