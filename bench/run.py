"""Runs the benchmark: ``python bench/run.py [--quick] [--json PATH] [--iterations N]``, or the MCP benchmark with
``--mcp`` first (``python bench/run.py --mcp [--quick] [--runs N] ...``), the MCP servers' cold starts with
``--mcp-cold`` (``[--rounds N]``), or a bare SDK server's cost per call on each stdio transport with
``--mcp-transport`` (``[--calls N] [--blocks N]``), launch to a first call in fresh processes with ``--launch-call``
(``[--rounds N]``), or issue 31's targets beside the peers in one table with ``--issue31`` (``[--rounds N]
[--calls N] [--busy N]``); see bench/README.md."""

import sys
from pathlib import Path

# The repository's root instead of bench/ (the harness is not part of the installed package, and bench/mcp.py
# must not stand in for the MCP SDK's ``mcp``).
sys.path[0] = str(Path(__file__).resolve().parents[1])


def _main() -> int:
    if sys.argv[1:2] == ["--mcp"]:
        from bench.mcp import main

        return main(sys.argv[2:])
    if sys.argv[1:2] == ["--mcp-cold"]:
        from bench.cold_start import main as cold

        return cold(sys.argv[2:])
    if sys.argv[1:2] == ["--mcp-transport"]:
        from bench.transport import main as transport

        return transport(sys.argv[2:])
    if sys.argv[1:2] == ["--launch-call"]:
        from bench.launch_call import main as launch_call

        return launch_call(sys.argv[2:])
    if sys.argv[1:2] == ["--issue31"]:
        from bench.issue31 import main as issue31

        return issue31(sys.argv[2:])
    from bench.harness import main as harness

    return harness()


raise SystemExit(_main())
