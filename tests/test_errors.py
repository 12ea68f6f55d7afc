"""What a person meets when something goes wrong: tracebacks that end at their own line in IPython, warnings
that point at their code, a missing key named by its variable, and the default provider following the keys."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import warnings

import pytest
from ports import free_port

import webmcp_nb as wm
from webmcp_nb.agent.providers import resolve_provider
from webmcp_nb.core import _loop
from webmcp_nb.core.agent_rules import PROVIDERS, default_provider
from webmcp_nb.core.errors import user_traceback

KEYS = [preset["api_key_env"] for preset in PROVIDERS.values() if preset["api_key_env"]]


def ipython(cells: list[str]) -> str:
    """What IPython shows for ``cells`` run one after the other (plain colours), from a fresh process."""
    script = textwrap.dedent(
        f"""
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance(colors="nocolor")
        for cell in {cells!r}:
            shell.run_cell(cell)
        """
    )
    env = {k: v for k, v in __import__("os").environ.items() if k not in KEYS}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    return out.stdout + out.stderr


def test_an_error_from_the_public_api_ends_at_the_users_line_in_ipython():
    port = free_port()
    shown = ipython(
        [
            "import webmcp_nb as wm",
            f"wm.connect(port={port}, start_relay=False)",  # blocking, through the library's loop
            f"await wm.aconnect(port={port}, start_relay=False)",  # its awaitable twin
            'wm.Agent(None, provider="deepseek")',  # a plain method of the package
        ]
    )
    assert shown.count("NotConnectedError") >= 4 and f"no relay is running on 127.0.0.1:{port}" in shown
    assert f"----> 1 wm.connect(port={port}, start_relay=False)" in shown
    assert f"----> 1 await wm.aconnect(port={port}, start_relay=False)" in shown
    assert "ConfigurationError: no API key for deepseek: set DEEPSEEK_API_KEY" in shown
    for internal in ("_loop.py", "connect.py", "concurrent/futures", "asyncio", "agent.py", "providers.py"):
        assert internal not in shown, f"{internal} in:\n{shown}"


def test_the_cut_keeps_the_users_frames_and_the_exception_keeps_all():
    @_loop.on_loop
    async def fail() -> None:
        raise wm.ToolError("the page said no")

    with pytest.raises(wm.ToolError) as caught:
        _loop.run(fail())
    full, cut = caught.value.__traceback__, user_traceback(caught.value.__traceback__)
    frames = []
    while cut is not None:
        frames.append(cut.tb_frame.f_code.co_name)
        cut = cut.tb_next
    assert frames == ["test_the_cut_keeps_the_users_frames_and_the_exception_keeps_all"]
    depth = 0
    while full is not None:
        depth, full = depth + 1, full.tb_next
    assert depth > 3  # %debug and traceback still see the library's frames


def test_a_warning_raised_on_the_loop_points_at_the_callers_line():
    async def work() -> int:
        _loop.warn("something to know", UserWarning)
        await asyncio.sleep(0)
        return 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _loop.run(work()) == 1
    (warning,) = caught
    assert warning.filename == __file__ and str(warning.message) == "something to know"

    async def cell() -> None:
        await _loop.on_loop(work)()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(cell())
    assert [w.filename for w in caught] == [__file__]


def test_a_warning_from_work_a_returned_call_left_running_is_still_shown():
    """A task a call started inherits where that call keeps its warnings; once the call had returned, what the task
    warned was kept for nobody and lost (a tab's ToolsOmittedWarning, warned once, then never again)."""
    warned = threading.Event()
    tasks: list[asyncio.Task[None]] = []

    async def start() -> None:
        async def later() -> None:
            await asyncio.sleep(0.05)
            _loop.warn("found after the call returned", UserWarning)
            warned.set()

        tasks.append(asyncio.ensure_future(later()))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _loop.run(start())
        assert warned.wait(10)
    assert [str(w.message) for w in caught] == ["found after the call returned"]


def test_a_missing_key_names_its_variable(monkeypatch):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(wm.ConfigurationError, match="set OPENAI_API_KEY") as caught:
        wm.Agent(None, model="m")  # type: ignore[arg-type] - refused before the tab is used
    assert not isinstance(caught.value, wm.InvalidArgumentsError)  # that one is for a tool's arguments
    assert "DEEPSEEK_API_KEY" in str(caught.value)  # and the other providers' variables


def test_the_default_provider_follows_the_keys_that_are_set(monkeypatch):
    assert default_provider({}) == "openai"
    assert default_provider({"DEEPSEEK_API_KEY": "sk"}) == "deepseek"
    assert default_provider({"MOONSHOT_API_KEY": "sk", "DASHSCOPE_API_KEY": "sk"}) == "qwen"
    assert default_provider({"OPENAI_API_KEY": "sk", "DEEPSEEK_API_KEY": "sk"}) == "openai"
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ZHIPUAI_API_KEY", "sk-glm")
    chosen = resolve_provider(None, None)
    assert chosen.name == "glm" and chosen.api_key() == "sk-glm"
