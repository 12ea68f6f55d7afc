"""Runs the benchmark: ``python bench/run.py [--quick] [--json PATH] [--iterations N]`` (see bench/README.md)."""

from webmcp_nb.benchmark import main

raise SystemExit(main())
