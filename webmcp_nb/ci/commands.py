"""The CI gate's commands, as ``webmcp-nb`` runs them: ``lint``, ``tools`` and ``diff`` (``cli.py`` has their
options). A target is a page (``http://…``, ``https://…``, or ``demo:PATH`` for the bundled demos, served here) or a
lock file; pages load in one Chromium launched for the command (native WebMCP unless ``--polyfill``). Exit codes:
0 passed, 1 the gate failed (lint errors, breaking changes), 2 the command could not run as asked (a wrong
option, a settings file, a lock file or a page that did not load), each said in a line a CI log reader acts on."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.display import visible
from ..core.errors import WebMCPError
from .config import WAIT_FOR, ConfigError, LintConfig
from .lock import LockError, ToolLock, json_text
from .report import LintReport

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..browser.tab import Tab

__all__ = ["lint_command", "tools_command", "diff_command", "UsageError", "PAGE_PREFIXES"]

PAGE_PREFIXES = ("http://", "https://", "demo:")


class UsageError(Exception):
    """The command cannot run as asked; the message says why and what to do (exit 2)."""


def is_page(target: str) -> bool:
    """Whether ``target`` names a page (else a lock file; :func:`check_targets` says when it is neither)."""
    return target.startswith(PAGE_PREFIXES)


def check_targets(targets: list[str]) -> None:
    for target in targets:
        if not is_page(target) and not Path(target).is_file():
            raise UsageError(
                f"{visible(target)!r} is neither a page (http://…, https://…, or demo:PATH for the bundled demos) "
                "nor a lock file that exists"
            )


@contextlib.asynccontextmanager
async def _browser(args: argparse.Namespace, needed: bool) -> AsyncIterator[Browser | None]:
    """A Chromium for the command's pages (none when every target is a file), closed after."""
    if not needed:
        yield None
        return
    from ..browser.launch import alaunch

    browser = await alaunch(headless=not args.headed, native_webmcp=not args.polyfill)
    try:
        yield browser
    finally:
        await browser.aclose()


@contextlib.asynccontextmanager
async def _page(browser: Browser, target: str, wait_for: list[str]) -> AsyncIterator[Tab]:
    """``target`` loaded in a tab of its own (``demo:PATH`` served here while it is used), its tools listed."""
    server = None
    url = target
    if target.startswith("demo:"):
        from ..demo.server import serve_demo

        server = serve_demo()
        url = server.url(target.removeprefix("demo:"))
    try:
        try:
            tab = await browser.aopen(url)
        except WebMCPError as exc:
            raise UsageError(f"cannot load {url}: {exc.what} (is the site running?)") from None
        try:
            for name in wait_for:
                try:
                    await tab.await_for_tool(name, WAIT_FOR)
                except WebMCPError as exc:
                    raise UsageError(f"--wait-for {name}: {exc.what}") from None
            yield tab
        finally:
            with contextlib.suppress(WebMCPError):
                await tab.aclose()
    finally:
        if server is not None:
            server.close()


async def _lock(args: argparse.Namespace, browser: Browser | None, target: str) -> ToolLock:
    if not is_page(target):
        return ToolLock.read(target)
    assert browser is not None
    async with _page(browser, target, args.wait_for) as tab:
        return ToolLock.of_tab(tab)


T = TypeVar("T")


def _run(command: str, body: Coroutine[Any, Any, T]) -> T | None:
    """Run a command's coroutine on the library's loop; ``None`` after saying a usage error in one line on
    stderr (the command then exits 2)."""
    from ..core import _loop

    try:
        return _loop.run(body)
    except (UsageError, ConfigError, LockError) as exc:
        print(f"webmcp-nb {command}: {visible(exc)}", file=sys.stderr)
        return None


def lint_command(args: argparse.Namespace) -> int:
    """``webmcp-nb lint TARGET… [--skill DIR]…``: exit 1 when a finding is an error."""

    async def body() -> LintReport:
        if not args.targets and not args.skill:
            raise UsageError("what to lint? give a page's URL (or demo:PATH), a lock file, or --skill DIR")
        check_targets(args.targets)
        for folder in args.skill:
            if not (Path(folder) / "SKILL.md").is_file():
                raise UsageError(f"--skill {visible(folder)}: no SKILL.md in that folder")
        config = LintConfig.load(args.config)
        from .lint import alint, alint_skill, lint_lock

        pages = []
        async with _browser(args, bool(args.skill) or any(map(is_page, args.targets))) as browser:
            for target in args.targets:
                if not is_page(target):
                    pages.append(lint_lock(target, config))
                    continue
                assert browser is not None
                async with _page(browser, target, args.wait_for) as tab:
                    found = await alint(
                        tab, config=config, second_load=not args.once, sample_calls=not args.no_calls,
                        wait_for=args.wait_for,
                    )  # fmt: skip
                pages += found.pages
            for folder in args.skill:
                assert browser is not None
                pages.append(await alint_skill(folder, browser, config=config))
        return LintReport(pages, config.path)

    report = _run("lint", body())
    if report is None:
        return 2
    print(report.json_text() if args.json else report, end="" if args.json else "\n")
    if args.junit:
        Path(args.junit).write_text(report.junit(), encoding="utf-8")
    if not report.ok:
        print(
            f"webmcp-nb lint: {report.count('error')} error(s): the gate fails (exit 1); fix them, or turn a rule off "
            "or make an exception in the lint settings (webmcp-lint.toml)",
            file=sys.stderr,
        )
        return 1
    return 0


def tools_command(args: argparse.Namespace) -> int:
    """``webmcp-nb tools TARGET [--json]``: a page's tools, or the lock file's text."""

    async def body() -> ToolLock:
        check_targets([args.target])
        async with _browser(args, is_page(args.target)) as browser:
            return await _lock(args, browser, args.target)

    lock = _run("tools", body())
    if lock is None:
        return 2
    if args.json:
        print(lock.text(), end="")
        return 0
    print(visible(f"{len(lock.tools)} tool(s) on {lock.source}"))
    for entry in lock.tools:
        print(visible(f"  {entry.where}: {' '.join(entry.description.split())[:100]}"))
    return 0


def diff_command(args: argparse.Namespace) -> int:
    """``webmcp-nb diff OLD NEW``: exit 1 on a breaking change unless ``--allow-breaking``."""
    from .diff import diff

    async def body() -> tuple[ToolLock, ToolLock]:
        check_targets([args.old, args.new])
        async with _browser(args, is_page(args.old) or is_page(args.new)) as browser:
            return await _lock(args, browser, args.old), await _lock(args, browser, args.new)

    locks = _run("diff", body())
    if locks is None:
        return 2
    changes = diff(*locks)
    print(json_text(changes.to_json()) if args.json else changes)
    if changes.breaking and not args.allow_breaking:
        print(
            f"webmcp-nb diff: {len(changes.breaking)} breaking change(s): the gate fails (exit 1). If they are meant, "
            "update the lock file (webmcp-nb tools URL --json > tools.lock.json) in the same change, or pass "
            "--allow-breaking",
            file=sys.stderr,
        )
        return 1
    return 0
