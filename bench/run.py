"""Runs the benchmark: ``python bench/run.py [--quick] [--json PATH] [--iterations N]`` (see bench/README.md)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the harness is not part of the installed package

from bench.harness import main

raise SystemExit(main())
