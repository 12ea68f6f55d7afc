"""The CI recipe in docs/ci.md runs: its commands are read from the page (the set-up block's lock file line and
every ``run:`` step of its GitHub Actions workflow but the install, which needs the network) and run here as the
workflow runs them — each step in its own shell, with the workflow's environment — on the bundled demo's flight
page as the site, its shipped eval suite as the site's ``evals.yaml``. So the page and the test cannot drift: a
command the page shows that fails here fails this test."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ports import free_port

from webmcp_nb.demo.server import DEMO_PAGES
from webmcp_nb.evals.suite import SUITES

DOC = Path(__file__).parents[1] / "docs" / "ci.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(), re.S | re.M)


def workflow() -> dict:
    [found] = [yaml.safe_load(block) for block in blocks("yaml") if "jobs:" in block]
    return found


@pytest.mark.slow
@pytest.mark.browser
def test_the_documented_workflow_runs_on_the_demo_site(tmp_path: Path):
    flow = workflow()
    [job] = flow["jobs"].values()
    steps = [step for step in job["steps"] if "run" in step]
    names = [step["name"] for step in steps]
    assert names == ["Install webmcp-nb", "Start the site", "Lint the tools", "Diff against the committed lock",
                     "Smoke eval (no API key)"]  # fmt: skip
    [setup] = [block for block in blocks("sh") if "tools.lock.json" in block]
    [once] = [line for line in setup.splitlines() if line.startswith("webmcp-nb ") and "> tools.lock.json" in line]

    (tmp_path / "site").symlink_to(DEMO_PAGES)  # the site: the demo pages, its tools on /flights/
    shutil.copy(SUITES / "flights.yaml", tmp_path / "evals.yaml")
    shutil.copy(SUITES / "flights.tools.json", tmp_path)
    port = free_port()
    env = {
        **os.environ,
        **{key: str(value) for key, value in job["env"].items()},
        "PORT": str(port),
        "SITE_URL": f"http://127.0.0.1:{port}/flights/",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # python and webmcp-nb
    }
    started = []

    def run(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip

    try:
        site = subprocess.Popen(["bash", "-e", "-c", steps[1]["run"]], cwd=tmp_path, env=env, start_new_session=True)
        started.append(site)
        assert site.wait(timeout=60) == 0, (tmp_path / "site.log").read_text()
        done = run(once)  # set up once: the lock the workflow diffs against (its lint is the workflow's)
        assert done.returncode == 0, (once, done.stdout, done.stderr)
        assert '"searchFlights"' in (tmp_path / "tools.lock.json").read_text()
        for step in steps[2:]:
            done = run(step["run"])
            assert done.returncode == 0, (step["name"], done.stdout, done.stderr)
        uploaded = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
        for path in uploaded["with"]["path"].split():
            assert (tmp_path / path).exists(), path
        assert (tmp_path / "eval-report" / "report.html").is_file()
        assert (
            "<testsuites" in (tmp_path / "lint.xml").read_text() and "<testcase" in (tmp_path / "eval.xml").read_text()
        )
    finally:
        for process in started:  # the site's server, in the step's process group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
