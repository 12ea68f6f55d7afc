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

from webmcp_nb.evals.suite import SUITES
from webmcp_nb.testing import ScriptedServer, by_task


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "webmcp_nb", "eval", *args, "--quiet"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.slow
def test_local_mode_on_their_files_exits_by_the_threshold(tmp_path: Path):
    files = ["-e", str(HERE / "evals.json"), "-t", str(HERE / "schema.json")]
    with ScriptedServer(by_task(PIZZA)) as good, ScriptedServer(by_task(SLOPPY)) as sloppy:
        models = ["-m", f"any:good@{good.base_url}", "-m", f"any:sloppy@{sloppy.base_url}"]
        prices = ["--price", "any:good=1,2"]
        failing = cli("local", *files, *models, *prices, "-o", str(tmp_path / "a"))
        passing = cli("local", *files, *models, "--threshold", "0.5", "-o", str(tmp_path / "b"))
    assert failing.returncode == 1, failing.stderr
    assert "any:sloppy: 50%" in failing.stdout
    assert failing.stderr.endswith(  # how many passed against how many were required, not "(100% success)"
        "webmcp-nb eval: exit 1, below the threshold:\n"
        "  any:sloppy: 2 of 4 runs passed (50%); the threshold, 100%, requires 4 of 4\n"
    )
    assert passing.returncode == 0, passing.stderr
    assert passing.stdout.endswith("(at least 50% of its runs passed) and no run ended in an error: exit 0\n")
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


@pytest.mark.slow
@pytest.mark.browser
def test_smoke_on_the_shipped_suites(tmp_path: Path):
    flights = cli("smoke", "--suite", "flights", "-o", str(tmp_path / "flights"))
    assert flights.returncode == 0, flights.stdout + flights.stderr
    assert "2/2 runs passed" in flights.stdout  # the small-talk task expects no call: nothing to smoke
    shop = cli("smoke", "--suite", "shop", "-o", str(tmp_path / "shop"))
    assert shop.returncode == 0, shop.stdout + shop.stderr


def test_each_mode_lists_only_its_own_options() -> None:
    helps = {
        mode: subprocess.run(
            [sys.executable, "-m", "webmcp_nb", "eval", mode, "--help"], capture_output=True, text=True, timeout=60
        ).stdout
        for mode in ("local", "browser", "smoke")
    }
    assert "--model" not in helps["smoke"] and "--variants" not in helps["smoke"] and "--tools" not in helps["smoke"]
    assert "--url" not in helps["local"] and "--native" not in helps["local"] and "--tools" in helps["local"]
    assert (
        "--tools" not in helps["browser"] and "--variants" in helps["browser"] and "scripted:FILE" in helps["browser"]
    )


def test_wrong_input_fails_before_any_run_and_says_what_to_do(tmp_path: Path):
    typo = cli("smoke", "--suite", "flight")
    assert typo.returncode == 2 and "no shipped suite 'flight'; the shipped suites: flights, shop" in typo.stderr
    keyless = cli(
        "browser", "--suite", "flights", "-m", "deepseek", "-o", str(tmp_path / "k"), env={"DEEPSEEK_API_KEY": ""}
    )
    assert keyless.returncode == 2, keyless.stdout + keyless.stderr
    assert "DEEPSEEK_API_KEY is not set" in keyless.stderr and "export DEEPSEEK_API_KEY=" in keyless.stderr
    assert "os.environ" not in keyless.stderr and not (tmp_path / "k").exists()  # shell words; no run started
    modelless = cli("browser", "--suite", "flights", "-o", str(tmp_path / "m"))  # the shipped suites name none
    assert modelless.returncode == 2 and "which models? give -m MODEL (for example -m scripted:flights" in (
        modelless.stderr
    )
    assert "run(suite" not in modelless.stderr and not (tmp_path / "m").exists()
    unreachable = cli("local", "--suite", "flights", "-m", "any:m@http://127.0.0.1:9/v1", "-o", str(tmp_path / "u"))
    assert (
        unreachable.returncode == 2
        and "http://127.0.0.1:9/v1" in unreachable.stderr
        and "cannot be reached" in (unreachable.stderr)
    )
    (tmp_path / "v.yaml").write_text("clearer: {setFilters: {name: other}}\n")
    variants = cli("local", "--suite", "flights", "-m", "scripted:flights", "--variants", str(tmp_path / "v.yaml"))
    assert variants.returncode == 2 and "'name' cannot be overridden" in variants.stderr
    for option, value, form in [
        ("--max-requests", "deepseek=abc", "expected PROVIDER=N"),
        ("--max-requests", "deepseek=0", "expected PROVIDER=N"),
        ("--price", "scripted:flights=cheap", "expected MODEL=INPUT,OUTPUT"),
        ("--repeats", "-2", "expected a whole number, 1 or more"),  # was an IndexError's traceback
        ("--repeats", "0", "expected a whole number, 1 or more"),  # ran the suite's 3 repeats
        ("--concurrency", "0", "expected a whole number, 1 or more"),
        ("--retries", "-1", "expected a whole number, 0 or more"),
        ("--threshold", "60", "expected a fraction of runs from 0 to 1 (0.8 for 80%)"),  # "6000% success"
        ("--threshold", "1.5", "expected a fraction of runs from 0 to 1"),
        ("--threshold", "-0.1", "expected a fraction of runs from 0 to 1"),
    ]:
        wrong = cli("local", "--suite", "flights", "-m", "scripted:flights", option, value, "-o", str(tmp_path / "w"))
        named = "-r/--repeats/--runs" if option == "--repeats" else option
        assert wrong.returncode == 2 and f"argument {named}: {form}" in wrong.stderr and repr(value) in wrong.stderr
        assert "Traceback" not in wrong.stderr and not (tmp_path / "w").exists()


@pytest.mark.slow
def test_a_scripted_model_tries_every_mode_with_no_key(tmp_path: Path):
    """The shipped suites' scripted models in local mode (browser mode: the next test, smoke: the one before)."""
    shop = cli("local", "--suite", "shop", "-m", "scripted:shop", "-o", str(tmp_path / "shop"), "-r", "1")
    assert shop.returncode == 0, shop.stdout + shop.stderr
    flights = cli("local", "--suite", "flights", "-m", "scripted:flights", "-o", str(tmp_path / "f"), "-r", "1")
    assert flights.returncode == 1 and "2/3 runs passed" in flights.stdout  # it does not filter: setFilters' text
    assert "FAIL scripted:flights · direct flights #1:\n      first expected call not met: setFilters(stops=[0]); " in (
        flights.stdout
    )
    variants = str(SUITES / "flights.variants.yaml")
    compared = cli("local", "--suite", "flights", "-m", "scripted:flights", "--variants", variants, "-r", "2",
                   "-o", str(tmp_path / "v"))  # fmt: skip
    assert "scripted:flights [clearer]: 100%" in compared.stdout  # (2/2 against 0/2 is within noise: p = 0.33)
    assert 'on "direct flights": no clear difference between clearer and shipped (2/2 passed' in compared.stdout


@pytest.mark.slow
@pytest.mark.browser
def test_browser_mode_with_a_scripted_model_and_page_text_made_visible(tmp_path: Path, server):
    """Browser mode on the shipped suite with no key (three runs, a Chromium each); and a page's error text meant
    for a terminal (erase the line, a fake verdict, an OSC 8 link) printed with its controls shown."""
    flights = cli("browser", "--suite", "flights", "-m", "scripted:flights", "-r", "1", "-o", str(tmp_path / "f"))
    assert flights.returncode == 1 and "2/3 runs passed" in flights.stdout, flights.stdout + flights.stderr
    assert 'page check failed: #applied-filters text: expected contains "Nonstop", the page showed ""' in flights.stdout
    suite = tmp_path / "terminal.yaml"
    expected = "[{functionName: shout, arguments: {}}]"
    suite.write_text(f"format: webmcp-nb-evals\ntasks:\n  - {{name: shout, prompt: x, expectedCall: {expected}}}\n")
    out = cli("smoke", "-e", str(suite), "-u", server.url("t/terminal.html"), "-o", str(tmp_path / "t"))
    assert out.returncode == 1
    assert "\x1b" not in out.stdout + out.stderr and "\x07" not in out.stdout and "\r" not in out.stdout
    assert (
        "FAIL smoke · shout #1:\n      smoke call 1 failed: shout: TOOL_ERROR: <U+001B>[2K<U+000D><U+001B>[1A"
        in out.stdout
    )
    assert "0/1 runs passed" in out.stdout and "<U+001B>]8;;javascript:alert(1)<U+0007>click" in out.stdout
