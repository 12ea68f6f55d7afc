"""``webmcp-nb eval local|browser|smoke``: what a site's CI runs. The exit code says whether every model reached
the threshold; the report and the sessions land in the output folder; no key ever reaches them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scripted_evals import HERE, PIZZA, SLOPPY

from webmcp_nb.testing import ScriptedServer, by_task


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "webmcp_nb", "eval", *args, "--quiet"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **(env or {})},
    )


def test_local_mode_on_their_files_exits_by_the_threshold(tmp_path: Path):
    files = ["-e", str(HERE / "evals.json"), "-t", str(HERE / "schema.json")]
    with ScriptedServer(by_task(PIZZA)) as good, ScriptedServer(by_task(SLOPPY)) as sloppy:
        models = ["-m", f"any:good@{good.base_url}", "-m", f"any:sloppy@{sloppy.base_url}"]
        prices = ["--price", "any:good=1,2"]
        failing = cli("local", *files, *models, *prices, "-o", str(tmp_path / "a"))
        passing = cli("local", *files, *models, "--threshold", "0.5", "-o", str(tmp_path / "b"))
    assert failing.returncode == 1, failing.stderr
    assert "below the threshold" in failing.stderr and "any:sloppy: 50%" in failing.stdout
    assert passing.returncode == 0, passing.stderr
    saved = json.loads((tmp_path / "a" / "report.json").read_text())
    assert saved["models"]["any:good"]["cost"] > 0 and saved["models"]["any:sloppy"]["cost"] is None
    assert (tmp_path / "a" / "report.html").exists() and len(list((tmp_path / "a" / "runs").iterdir())) == 8


def test_a_key_from_the_environment_never_reaches_the_output(tmp_path: Path):
    secret = "sk-eval-never-written-0123456789"
    with ScriptedServer(by_task(PIZZA)) as good:  # the deepseek preset reads DEEPSEEK_API_KEY
        out = cli(
            "local", "-e", str(HERE / "evals.json"), "-t", str(HERE / "schema.json"),
            "-m", f"deepseek:scripted@{good.base_url}", "-o", str(tmp_path), env={"DEEPSEEK_API_KEY": secret},
        )  # fmt: skip
        sent = len(good.requests)
    assert out.returncode == 0 and sent, out.stdout + out.stderr
    written = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    assert "deepseek:scripted" in written and secret not in written + out.stdout + out.stderr


def test_a_suite_that_is_wrong_exits_2(tmp_path: Path):
    (tmp_path / "bad.yaml").write_text("format: webmcp-nb-evals\ntasks: []\n")
    out = cli("smoke", "-e", str(tmp_path / "bad.yaml"))
    assert out.returncode == 2 and "non-empty list" in out.stderr


@pytest.mark.browser
def test_smoke_on_the_shipped_suites(tmp_path: Path):
    flights = cli("smoke", "--suite", "flights", "-o", str(tmp_path / "flights"))
    assert flights.returncode == 0, flights.stdout + flights.stderr
    assert "2/2 runs passed" in flights.stdout  # the small-talk task expects no call: nothing to smoke
    shop = cli("smoke", "--suite", "shop", "-o", str(tmp_path / "shop"))
    assert shop.returncode == 0, shop.stdout + shop.stderr
