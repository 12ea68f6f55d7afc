"""The ``webmcp-nb`` command: ``demo``, ``replay``, ``eval``, ``lint``, ``tools``, ``diff``, ``relay``, ``mcp``,
``mcp-config``, ``pair``, ``grants``, ``doctor``, ``browsers``, ``extension-path``, ``serve-demo``. Without a command
it prints its help and starts nothing; every option says what it does in plain text (a test walks the parser). The
benchmark is not part of the package: ``python bench/run.py`` in a checkout."""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import math
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._version import __version__
from .link.home import UnsafeHomeError, home, read_secret, relay_port, write_private

if TYPE_CHECKING:
    from .browser.early import EarlyChromium
    from .mcp.early import EarlyWire

__all__ = ["main", "parser"]

DESCRIPTION = """\
webmcp-nb: list and call a web page's WebMCP tools from a notebook or a shell, in your own Chrome (through the
relay and the paired extension) or in a Chromium it launches. Try the demo first: webmcp-nb demo."""
EPILOG = "webmcp-nb COMMAND --help shows a command's options. In Python: import webmcp_nb as wm."
PORT_HELP = "the relay's port (default: $WEBMCP_NB_PORT, else 17830)"

SHELL_STEPS: dict[str, str] = {
    "set_key": "Export it in the shell that runs webmcp-nb (export {variable}=…) and run the command again.",
    "reconnect": "Run `webmcp-nb doctor` to see what is wrong.",
    "relaunch": "Run the command again.",
    "choose_browser": "`webmcp-nb browsers` lists them.",
}
"""The next step of an error (``WebMCPError.hint``) in a shell user's words."""


def _worded(exc: BaseException) -> str:
    """An error as a shell user reads it: the library's errors with their next step in the shell's words (page
    text in them made visible)."""
    from .core.display import visible
    from .core.errors import WebMCPError

    return visible(exc.worded(SHELL_STEPS)) if isinstance(exc, WebMCPError) else visible(exc)


def _running_relay(port: int) -> int | None:
    """The pid of this account's relay daemon on ``port``, from its pid file, if that process still runs."""
    try:
        pid = int((home() / f"relay-{port}.pid").read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def _relay(args: argparse.Namespace) -> int:
    import asyncio

    from .link.listeners import describe_holder
    from .link.relay import Relay

    logging.basicConfig(level=logging.INFO, format="%(asctime)s relay %(message)s")
    idle = args.idle_exit if args.idle_exit > 0 else None
    port = relay_port(args.port)

    async def run() -> None:
        try:
            relay = await Relay(read_secret, port=port, idle_timeout=idle, enforce_grants=True).start()
        except OSError as exc:
            pid = _running_relay(port)
            if pid is not None:
                why = f"a webmcp-nb relay is already running there (pid {pid})"
            else:
                why = f"port {port} is in use by another program ({describe_holder(port)}); set WEBMCP_NB_PORT"
            print(f"webmcp-nb relay: cannot listen on 127.0.0.1:{port}: {why} [{exc.strerror}]", file=sys.stderr)
            raise SystemExit(1) from None
        print(f"webmcp-nb relay listening on ws://127.0.0.1:{relay.port} (pid {os.getpid()})", flush=True)
        pid_file = home() / f"relay-{relay.port}.pid"
        write_private(pid_file, f"{os.getpid()}\n")
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: asyncio.ensure_future(relay.close()))
        try:
            await relay.serve_forever()
        finally:
            if _running_relay(relay.port) == os.getpid():
                pid_file.unlink(missing_ok=True)

    asyncio.run(run())
    return 0


LAUNCH_ONLY = {"headed": "--headed", "native_webmcp": "--native-webmcp"}
"""``webmcp-nb mcp``'s options that change the Chromium it launches: without ``--launch`` there is none."""
RELAY_ONLY = {"port": "--port", "browser_id": "--browser-id"}
"""Its options that pick your own Chrome's relay and browser: with ``--launch`` it has its own."""


def _mixed_modes(args: argparse.Namespace) -> str | None:
    """Why ``webmcp-nb mcp``'s options do not fit its mode (``--launch`` or your own Chrome), or ``None``."""
    launch_only = [option for name, option in LAUNCH_ONLY.items() if getattr(args, name)]
    relay_only = [option for name, option in RELAY_ONLY.items() if getattr(args, name) is not None]
    given = launch_only if not args.launch else relay_only
    if not given:
        return None
    need, they, them = ("needs", "it is", "it") if len(given) == 1 else ("need", "they are", "them")
    if not args.launch:
        return (
            f"{' and '.join(given)} {need} --launch: {they} for the Chromium this server starts; "
            f"without --launch it uses your own Chrome through the relay. Add --launch, or leave {them} out."
        )
    return (
        f"{' and '.join(given)} {'does' if len(given) == 1 else 'do'} nothing with --launch: {they} for your own "
        f"Chrome's relay, and with --launch this server starts its own relay and Chromium. Leave {them} out, or "
        "drop --launch."
    )


def _mcp(args: argparse.Namespace) -> int:
    if (mixed := _mixed_modes(args)) is not None:
        print(f"webmcp-nb mcp: {mixed}", file=sys.stderr)
        return 2
    gc.disable()  # the start makes its objects by importing, none of them garbage: ~10 % of it was collections
    wire = _early_wire()  # first the wire, answering the client's initialize while the rest is imported
    early = _early_chromium(args) if args.launch else None  # then the browser, starting meanwhile
    try:
        return _serve_mcp(args, early, wire)
    finally:
        gc.enable()
        if early is not None:
            early.close()  # (a no-op when the server took it over and closed it)
        if wire is not None:
            wire.restore()  # (likewise)


def _early_wire() -> EarlyWire | None:
    """The stdio wire, taken before the MCP SDK is imported (when it is installed, and stdio is a pipe)."""
    import importlib.util

    from .mcp.early import EarlyWire, pipes

    return EarlyWire() if pipes() and importlib.util.find_spec("mcp") is not None else None


def _early_chromium(args: argparse.Namespace) -> EarlyChromium:
    """``--launch``: the Chromium started before the MCP SDK and the server are imported, on ``--url`` (when an
    MCP client may open it; else on about:blank, and the server says why it did not load it)."""
    from .browser.early import start_early
    from .core.errors import PermissionDeniedError
    from .mcp.urls import check_url

    url = None
    if args.url:
        with contextlib.suppress(PermissionDeniedError):
            url = check_url(args.url, allow_file_urls=args.allow_file_urls)
    return start_early(url, headless=not args.headed, native_webmcp=args.native_webmcp)


def _serve_mcp(args: argparse.Namespace, early: EarlyChromium | None, wire: EarlyWire | None) -> int:
    if early is not None:
        from .browser.early import connect_soon

        connect_soon(early, headless=not args.headed, native_webmcp=args.native_webmcp)  # while the SDK imports
    try:
        from .mcp.server import Options, serve
    except ImportError as exc:
        print(f"webmcp-nb mcp needs the MCP SDK: pip install 'webmcp-nb[mcp]' ({exc})", file=sys.stderr)
        return 2
    from .browser.overrides import load_overrides
    from .core.errors import ConfigurationError

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="webmcp-nb mcp: %(message)s")
    try:
        overrides = load_overrides(args.overrides) if args.overrides else {}
    except ConfigurationError as exc:
        print(f"webmcp-nb mcp: --overrides {exc}", file=sys.stderr)
        return 2
    options = Options(
        launch=args.launch,
        url=args.url,
        headed=args.headed,
        native_webmcp=args.native_webmcp,
        port=args.port,
        browser_id=args.browser_id,
        allow_file_urls=args.allow_file_urls,
        ask_timeout=args.ask_timeout,
        overrides=overrides,
    )
    gc.freeze()  # what the imports made is kept for good: later collections need not look at it
    gc.enable()
    return serve(options, early=early, wire=wire)


def _mcp_words(args: argparse.Namespace) -> list[str]:
    """The ``webmcp-nb mcp`` options given to ``mcp-config``, as the entry's arguments (an overrides file by its
    absolute path: the app starts the server in another folder)."""
    words: list[str] = []
    for action in args.mcp_actions:
        value = getattr(args, action.dest)
        if value == action.default:
            continue
        option = action.option_strings[-1]
        if action.nargs == 0:  # a switch
            words.append(option)
        elif action.dest == "overrides":
            words += [option, str(Path(value).expanduser().resolve())]
        else:
            words += [option, format(value, "g") if isinstance(value, float) else str(value)]
    return words


def _mcp_config(args: argparse.Namespace) -> int:
    from .mcp.desktop import CLIENTS, NAME, ConfigFileError, launch_entry, merge

    def refuse(text: str) -> int:
        print(f"webmcp-nb mcp-config: {text}", file=sys.stderr)
        return 2

    if (mixed := _mixed_modes(args)) is not None:
        return refuse(mixed)
    if not NAME.match(args.name):
        return refuse(f"--name {args.name!r}: use letters, digits, - and _ (at most 64), as every client accepts")
    if args.overrides:
        from .browser.overrides import load_overrides
        from .core.errors import ConfigurationError

        try:
            load_overrides(args.overrides)
        except ConfigurationError as exc:
            return refuse(f"--overrides {exc}")
    client = CLIENTS[args.client]
    launch = launch_entry(_mcp_words(args))
    file = Path(args.config_file) if args.config_file else client.default_file()
    if args.config_file and not args.write:
        return refuse("--config-file is where --write puts the entry: give --write too, or leave it out")
    if not args.write:
        print(client.text(args.name, launch), end="")
        if client.key == "inspector":
            step = (
                "Save it as a file, then: npx @modelcontextprotocol/inspector --config FILE --server "
                f"{args.name} (add --cli --method tools/list to list the tools in the shell)."
            )
        else:
            step = (
                f"Put the entry in {client.title}'s {client.servers_key} in {file}, then {client.restart}; or "
                f"run again with --write to merge it there."
            )
        print(step, file=sys.stderr)
        _say_sdk_missing()
        return 0
    if file is None:
        return refuse(f"{client.title} has no config file of its own: give --config-file PATH")
    try:
        merged = merge(client, args.name, launch, file)
    except (ConfigFileError, OSError) as exc:
        return refuse(str(exc))
    if merged.done == "unchanged":
        print(f"{merged.file} already has this {args.name} entry: nothing changed")
    else:
        kept = f"; the old file is kept as {merged.backup}" if merged.backup else ""
        print(f"{merged.done} the {args.name} entry in {merged.file}{kept}")
        if client.restart:
            print(f"Next: {client.restart}.")
    _say_sdk_missing()
    return 0


def _say_sdk_missing() -> None:
    """A warning when ``webmcp-nb mcp`` could not start here: the MCP SDK is an extra."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        print(
            "webmcp-nb mcp-config: the entry will not start yet: webmcp-nb mcp needs the MCP SDK "
            "(pip install 'webmcp-nb[mcp]')",
            file=sys.stderr,
        )


def _pair(args: argparse.Namespace) -> int:
    from .browser.chromium import extension_path
    from .link.home import rotate_secret
    from .own_chrome.pairing import browser_folders, install, uninstall

    folders = [Path(d).expanduser() for d in args.user_data_dir] or None
    for folder in folders or ():
        if not folder.is_dir():  # a typo would have made a new folder, that no browser reads, and said "installed"
            print(
                f"webmcp-nb pair: --user-data-dir {folder} is not a folder that exists. Name the user-data folder of "
                "a browser you have started: chrome://version shows its Profile Path, and the user-data folder is "
                "that path without its last part (Default, Profile 1…).",
                file=sys.stderr,
            )
            return 2
    if args.remove:
        for path in uninstall(folders):
            print(f"removed {path}")
        return 0
    if args.rotate:
        rotate_secret()
        print(
            "made a new pairing secret; paired extensions fetch it by themselves when they next connect. Peers "
            "connected now stay connected until they reconnect: to cut them off, stop the relay (webmcp-nb doctor "
            "shows its pid)."
        )
    written = install(folders, port=relay_port(args.port))
    if not written:
        known = ", ".join(str(f.path) for f in browser_folders())
        print(
            "webmcp-nb pair: found no Chrome/Chromium user-data folder (looked in: "
            f"{known}). Start your browser once, or name its folder with --user-data-dir.",
            file=sys.stderr,
        )
        return 1
    for path in written:
        print(f"installed the pairing host for {path.parent.parent}")
    print(
        "Next: load the extension (chrome://extensions → Developer mode → Load unpacked → "
        f"{extension_path()}); it pairs by itself within 10 s. Then in a notebook: wm.connect()."
    )
    return 0


def _grants(args: argparse.Namespace) -> int:
    from .link.grants import GrantError, GrantFileError, grants, parse_origin

    try:
        if args.action == "allow":
            grant = grants.allow(args.origin, args.level, by="cli")
            print(f"{grant.origin}: {grant.level}")
        elif args.action == "deny":
            print(f"{grants.deny(args.origin, by='cli').origin}: none (never, and never asked)")
        elif args.action == "revoke":
            site = parse_origin(args.origin)
            gone = grants.revoke(site)
            print(f"{site}: {'revoked: it asks again' if gone else 'had no grant'}")
        else:
            print(grants._repr_mimebundle_()["text/plain"])
            problem = grants.snapshot().problem
            if problem:
                print(f"webmcp-nb grants: {problem}", file=sys.stderr)
                return 1
    except GrantError as exc:
        print(f"webmcp-nb grants: {exc}", file=sys.stderr)
        return 2
    except GrantFileError as exc:
        print(f"webmcp-nb grants: {exc}", file=sys.stderr)
        return 1
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from .own_chrome.doctor import doctor

    diagnosis = doctor(args.port, user_data_dirs=args.user_data_dir or None)
    print(diagnosis)
    return 0 if diagnosis.ok else 1


def _browsers(args: argparse.Namespace) -> int:
    import asyncio

    from .core.display import visible
    from .core.errors import NotConnectedError
    from .own_chrome.connect import BrowserSummary, relay_status

    port = relay_port(args.port)
    try:
        status = asyncio.run(relay_status(port))
    except NotConnectedError as exc:  # another program holds the port
        print(f"webmcp-nb browsers: {exc}", file=sys.stderr)
        return 1
    if status is None:
        print(
            f"webmcp-nb browsers: no relay is running on 127.0.0.1:{port} (wm.connect() or `webmcp-nb relay` "
            "starts one; `webmcp-nb doctor` checks everything)",
            file=sys.stderr,
        )
        return 1
    found = [BrowserSummary.from_state(b) for b in status.get("browsers") or []]
    for summary in found:
        print(visible(str(summary)))
    if not found:
        print(f"no browser is connected to the relay on port {port}", file=sys.stderr)
    return 0


def _extension_path(args: argparse.Namespace) -> int:
    from .browser.chromium import extension_path

    print(extension_path())
    return 0


def _serve_demo(args: argparse.Namespace) -> int:
    from .demo.server import serve_demo

    server = serve_demo(args.port)
    print(f"demo pages on {server.base} (Ctrl-C to stop)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        signal.pause()
    server.close()
    return 0


def _demo(args: argparse.Namespace) -> int:
    from .demo.run import record_demo_session, run_demo

    if args.record:
        print(f"recorded {record_demo_session()}")
        return 0
    return run_demo(headless=not args.headed, native_webmcp=args.native, report=Path(args.report))


def _replay(args: argparse.Namespace) -> int:
    from .browser.launch import launch
    from .demo.server import DEMO_PAGES, serve_demo
    from .recording.session import Session
    from .replay.replay import replay_agent, replay_calls

    recorded = Session.load(args.session)
    url = args.url or recorded.first_url
    server = None
    path = urlsplit(url or "").path
    if not args.url and path and (DEMO_PAGES / path.lstrip("/")).exists():
        server = serve_demo()  # a bundled demo page: serve it here, whatever port it had when recorded
        url = server.url(path)
    if not url:
        print("webmcp-nb replay: the session never used a page (no call, no navigation); pass --url", file=sys.stderr)
        return 2
    agent_turns = bool(recorded.filter("model.response")) and not args.calls
    # Nobody answers an ask here, so what asks is denied: --allow-high-risk runs high-risk calls only where nothing
    # asks about them, under confirm "never" (every other policy asks about high risk).
    confirm = args.confirm or ("never" if args.allow_high_risk else "high")
    if args.allow_high_risk and confirm != "never":
        print(
            f"webmcp-nb replay: --allow-high-risk with --confirm {confirm} runs no high-risk call: that policy asks "
            "about high risk, and nobody answers here (drop --confirm, or give --confirm never)",
            file=sys.stderr,
        )
        return 2
    try:
        with launch(headless=not args.headed, native_webmcp=args.native) as browser:
            tab = browser.open(url)
            replay = replay_agent if agent_turns else replay_calls
            policy = {"confirm": confirm, "allow_high_risk": args.allow_high_risk}  # nobody here answers an ask
            report = replay(recorded, tab, ignore=tuple(args.ignore), tolerance=args.tolerance, progress=True, **policy)
            print(report)
            if args.report and report.session is not None:
                report.session.report(args.report)
                print(f"HTML report: {Path(args.report).resolve()}")
    finally:
        if server is not None:
            server.close()
    return 0 if report.ok else 1


def _eval(args: argparse.Namespace) -> int:
    import dataclasses

    from . import evals
    from .core.display import visible
    from .core.errors import ConfigurationError

    options = vars(args)
    try:
        suite = evals.builtin(args.suite) if args.suite else evals.load(args.evals, tools=options.get("tools"))
        if options.get("tools") and args.suite:
            suite = suite.with_tools(args.tools)
        models = [evals.Model.parse(m) for m in options.get("model", [])] or None
        for label, given, out in options.get("price", []):
            models = [
                dataclasses.replace(m, price_input=given, price_output=out) if m.label == label else m
                for m in models or [evals.Model.parse(s) for s in suite.models]
            ]
        limits = dict(options.get("max_requests", []))
        variants = evals.load_variants(args.variants) if options.get("variants") else None
        report = evals.run(
            suite,
            models=models,
            repeats=args.repeats,
            mode=args.mode,
            engine=args.engine,
            client=args.scheduler,
            concurrency=args.concurrency,
            retries=args.retries,
            start_url=options.get("url"),
            output=args.output_dir,
            provider_limits=limits,
            native_webmcp=options.get("native", False),
            progress=not args.quiet,
            variants=variants,
        )
    except (ConfigurationError, evals.SuiteError, ValueError, OSError) as exc:
        print(f"webmcp-nb eval: {_in_shell_words(exc)}", file=sys.stderr)
        return 2
    print(report)
    if report.directory is not None:
        print(f"report: {visible((report.directory / 'report.html').resolve())} (and report.json; sessions in runs/)")
    if args.junit:
        from .ci.junit import eval_junit

        Path(args.junit).write_text(eval_junit(report, args.threshold), encoding="utf-8")
    if not report.ok(args.threshold):
        print("webmcp-nb eval: exit 1, below the threshold:", file=sys.stderr)
        print("\n".join(f"  {visible(line)}" for line in report.shortfalls(args.threshold)), file=sys.stderr)
        return 1
    reached = f"at least {args.threshold:.0%} of its runs passed"
    print(f"every model reached the threshold ({reached}) and no run ended in an error: exit 0")
    return 0


def _in_shell_words(exc: Exception) -> str:
    """An eval's configuration or input error as a shell user acts on it: the variable to export or the option to
    give, not a notebook cell (text in it made visible)."""
    from .core.display import visible

    data = getattr(exc, "data", None)
    if isinstance(data, Mapping) and data.get("variable"):
        variable = data["variable"]
        return visible(
            f"no API key for {data.get('model')}: {variable} is not set. Set it in this shell (export "
            f"{variable}=…) and run the command again, or try the suite with no key: -m scripted:FILE (the "
            "shipped suites have scripted models: -m scripted:flights, -m scripted:shop). No run was started."
        )
    if isinstance(data, Mapping) and data.get("missing") == "models":
        return (
            "which models? give -m MODEL (for example -m scripted:flights to try without a key), or models: in "
            "the suite"
        )
    return _worded(exc)


EVAL_MODES = {
    "local": (
        "tools from a schema.json, mock outputs, no browser",
        {"tools", "model", "variants", "price", "max_requests"},
    ),
    "browser": (
        "a fresh Chromium per run on the live page",
        {"url", "native", "model", "variants", "price", "max_requests"},
    ),
    "smoke": ("the expected calls with sample arguments, no model (CI)", {"url", "native"}),
}
"""Each eval mode, its help, and the options only it takes (the rest are shared)."""


def _command(sub: Any, name: str, text: str, description: str | None = None) -> argparse.ArgumentParser:
    """A subcommand whose help (in the list of commands) and description (atop its own help) say what it does."""
    command: argparse.ArgumentParser = sub.add_parser(name, help=text, description=description or text)
    return command


def _eval_parser(sub: Any) -> None:
    evaluation = _command(
        sub,
        "eval",
        "run an eval suite (webmcp-evals' files or native ones); exits 1 below --threshold",
        description="Modes: local (tools from a schema file, mocked outputs), browser (a live page), smoke (the "
        "expected calls with sample arguments, no model). Keys come from the environment only; -m scripted:FILE "
        "(or scripted:flights, scripted:shop) is a stand-in model that needs none.",
    )
    modes = evaluation.add_subparsers(dest="mode", required=True)
    for mode, (text, own) in EVAL_MODES.items():
        p = _command(modes, mode, text)
        source = p.add_mutually_exclusive_group(required=True)
        source.add_argument("-e", "--evals", help="a suite file: webmcp-evals' evals.json, or a native YAML/JSON")
        source.add_argument("--suite", help="a shipped suite: flights or shop (the bundled demos)")
        if "tools" in own:
            p.add_argument("-t", "--tools", help="the tools, as webmcp-evals' schema.json (else the suite's tools:)")
        if "url" in own:
            p.add_argument(
                "-u", "--url", help="the start URL (default: the suite's; demo:PATH serves the bundled demos)"
            )
        if "model" in own:
            p.add_argument(
                "-m", "--model", action="append", default=[],
                help="provider:model[@base_url], or scripted:FILE (a scripted stand-in, no key); repeatable",
            )  # fmt: skip
        if "variants" in own:
            p.add_argument(
                "--variants", metavar="FILE",
                help="tool variants (YAML/JSON: {variant: {tool: {description, title, input_schema}}}): every task "
                "runs under each, and the report says which wins",
            )  # fmt: skip
        p.add_argument(
            "-r", "--repeats", "--runs", type=_at_least(1), default=None,
            help="runs per task and model, 1 or more (default: the suite's repeats; smoke: 1)",
        )  # fmt: skip
        p.add_argument("--engine", choices=["local", "dask"], default="local", help="where runs go (default: local)")
        p.add_argument("--scheduler", help="dask: a scheduler address (default: a LocalCluster here)")
        p.add_argument(
            "--concurrency", type=_at_least(1), default=2, help="runs at once (local), or workers started; 1 or more"
        )
        p.add_argument(
            "--retries", type=_at_least(0), default=1, help="tries again after a browser or endpoint error; 0 or more"
        )
        p.add_argument(
            "--threshold", type=_fraction, default=1.0,
            help="the success rate each model must reach, a fraction from 0 to 1 (0.8: 80%%; default 1)",
        )  # fmt: skip
        if "price" in own:
            p.add_argument(
                "--price", action="append", default=[], type=_price, metavar="MODEL=INPUT,OUTPUT",
                help="a model's price in USD per million tokens, input and output (e.g. deepseek-chat=0.27,1.10)",
            )  # fmt: skip
        if "max_requests" in own:
            p.add_argument(
                "--max-requests", action="append", default=[], type=_provider_limit, metavar="PROVIDER=N",
                help="at most N model requests at once to PROVIDER (a preset name or a base URL); repeatable",
            )  # fmt: skip
        p.add_argument("-o", "--output-dir", default=None, help="where sessions and reports go (default .evals/ID)")
        p.add_argument(
            "--junit", metavar="FILE",
            help="also write the results as JUnit XML: a test case per task, model and variant, failing below "
            "--threshold with each run's reason",
        )  # fmt: skip
        if "native" in own:
            p.add_argument("--native", action="store_true", help="the browser's own WebMCP, not the polyfill")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
        p.set_defaults(func=_eval)


def _lint(args: argparse.Namespace) -> int:
    from .ci.commands import lint_command

    return lint_command(args)


def _tools(args: argparse.Namespace) -> int:
    from .ci.commands import tools_command

    return tools_command(args)


def _diff(args: argparse.Namespace) -> int:
    from .ci.commands import diff_command

    return diff_command(args)


TARGET_HELP = "a page (http://…, https://…, or demo:PATH for the bundled demos) or a lock file"


def _page_options(command: argparse.ArgumentParser) -> None:
    """The options of a command that loads pages in a Chromium it launches."""
    command.add_argument("--polyfill", action="store_true", help="the extension's polyfill, not native WebMCP")
    command.add_argument("--headed", action="store_true", help="show the browser window")
    command.add_argument(
        "--wait-for", action="append", default=[], metavar="NAME",
        help="wait (up to 10 s, on each load) for the page to register this tool before reading its tools; repeatable",
    )  # fmt: skip


def _ci_parsers(sub: Any) -> None:
    """``lint``, ``tools`` and ``diff``: the site author's CI gate (``webmcp_nb.ci``)."""
    linting = _command(
        sub,
        "lint",
        "check a page's tools (names, schemas, budgets, annotations, text aimed at the model); exits 1 on errors",
        description="Each finding has a rule id, a severity and a fix; errors fail the gate (exit 1), usage errors "
        "exit 2. Settings (budgets, rules off, exceptions): webmcp-lint.toml, or [tool.webmcp-nb.lint] in "
        "pyproject.toml.",
    )
    linting.add_argument("targets", nargs="*", metavar="TARGET", help=TARGET_HELP)
    linting.add_argument(
        "--skill", action="append", default=[], metavar="DIR",
        help="a skill's folder: check its SKILL.md, run its smoke step on its fixture page, lint its tools; "
        "repeatable",
    )  # fmt: skip
    linting.add_argument("--config", metavar="FILE", help="the settings file (default: found from this folder up)")
    linting.add_argument("--json", action="store_true", help="print the findings as JSON")
    linting.add_argument("--junit", metavar="FILE", help="also write the findings as JUnit XML (a test case per tool)")
    linting.add_argument("--once", action="store_true", help="load each page once (no check that names are stable)")
    linting.add_argument("--no-calls", action="store_true", help="make no sample calls (no output budget check)")
    _page_options(linting)
    linting.set_defaults(func=_lint)

    listing = _command(sub, "tools", "list a page's tools; --json writes its lock file (sorted, stable across loads)")
    listing.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    listing.add_argument("--json", action="store_true", help="print the lock file: webmcp-nb tools URL --json > FILE")
    _page_options(listing)
    listing.set_defaults(func=_tools)

    changes = _command(
        sub,
        "diff",
        "what changed between two versions of a page's tools, breaking or compatible; exits 1 on a breaking change",
    )
    changes.add_argument("old", metavar="OLD", help=f"the version before: {TARGET_HELP}")
    changes.add_argument("new", metavar="NEW", help=f"the version after: {TARGET_HELP}")
    changes.add_argument("--allow-breaking", action="store_true", help="exit 0 even with breaking changes")
    changes.add_argument("--json", action="store_true", help="print the changes as JSON")
    _page_options(changes)
    changes.set_defaults(func=_diff)


def _price(text: str) -> tuple[str, float, float]:
    """``--price MODEL=INPUT,OUTPUT``, or a usage error that shows the form."""
    wrong = argparse.ArgumentTypeError(
        f"expected MODEL=INPUT,OUTPUT (USD per million tokens, e.g. deepseek-chat=0.27,1.10), not {text!r}"
    )
    label, _, numbers = text.partition("=")
    given, _, out = numbers.partition(",")
    try:
        prices = float(given), float(out)
    except ValueError:
        raise wrong from None
    if not label or not all(math.isfinite(v) and v >= 0 for v in prices):
        raise wrong
    return label, *prices


def _at_least(minimum: int) -> Callable[[str], int]:
    """An option's whole number, ``minimum`` or more, or a usage error that says so (argparse names the option)."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number, {minimum} or more, not {text!r}")
        return value

    return whole


def _fraction(text: str) -> float:
    """``--threshold``: the success rate each model must reach, as ``EvalReport.ok`` takes it (a fraction from 0
    to 1), or a usage error."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction of runs from 0 to 1 (0.8 for 80%), not {text!r}")
    return value


def _provider_limit(text: str) -> tuple[str, int]:
    """``--max-requests PROVIDER=N``, or a usage error that shows the form."""
    provider, _, count = text.partition("=")
    if not provider or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(
            f"expected PROVIDER=N (a preset name or a base URL, then a whole number of requests, 1 or more), "
            f"not {text!r}"
        )
    return provider, int(count)


def _mcp_options(mcp: argparse._ActionsContainer) -> list[argparse.Action]:
    """``webmcp-nb mcp``'s options (``mcp-config`` takes them too, to write them into the entry); the actions."""
    return [
        mcp.add_argument("--launch", action="store_true", help="launch its own Chromium instead of using your Chrome"),
        mcp.add_argument("--url", help="open this URL and bind the session to its tab"),
        mcp.add_argument("--headed", action="store_true", help="with --launch: show the browser window"),
        mcp.add_argument("--native-webmcp", action="store_true", help="with --launch: the browser's own WebMCP"),
        mcp.add_argument("--port", type=int, default=None, help=PORT_HELP),
        mcp.add_argument("--browser-id", default=None, help="which browser, when several are connected to the relay"),
        mcp.add_argument(
            "--allow-file-urls",
            action="store_true",
            help="let the MCP client open file: URLs (off: only http, https and about:blank)",
        ),
        mcp.add_argument(
            "--ask-timeout",
            type=_ask_seconds,
            default=60.0,
            help="seconds an ask for a site's grant waits for you, more than 0 and at most 600 (default 60)",
        ),
        mcp.add_argument(
            "--overrides",
            metavar="FILE",
            help="a YAML or JSON file {tool: {description, title, input_schema}}: what the client is shown instead "
            "of the page's own text (calls still reach the page's tools)",
        ),
    ]


def _mcp_config_parser(sub: Any) -> None:
    from .mcp.desktop import CLIENTS

    config = _command(
        sub,
        "mcp-config",
        "print (or --write) the entry that starts webmcp-nb mcp in Claude Desktop, Cursor, VS Code, Codex or the "
        "MCP Inspector",
        description="A desktop app has no shell: a virtualenv's bin/ is not on its PATH, so a bare `webmcp-nb` "
        "does not start there. This prints the entry with the installed script's absolute path, the mcp options "
        "given here, and WEBMCP_NB_HOME/WEBMCP_NB_PORT when they are set; --write merges it into the client's "
        "config file, keeping a backup and every other entry.",
    )
    config.add_argument(
        "client",
        nargs="?",
        default="claude-desktop",
        choices=list(CLIENTS),
        help="the client whose config to print (default: claude-desktop)",
    )
    config.add_argument(
        "--write",
        action="store_true",
        help="merge the entry into the client's config file (a backup of the old file is kept beside it)",
    )
    config.add_argument(
        "--config-file",
        metavar="PATH",
        help="with --write: this file instead of the client's own (the inspector has none: it needs one)",
    )
    config.add_argument("--name", default="webmcp-nb", help="the entry's name (default: webmcp-nb)")
    options = config.add_argument_group("webmcp-nb mcp's options, written into the entry")
    config.set_defaults(func=_mcp_config, mcp_actions=_mcp_options(options))


def parser() -> argparse.ArgumentParser:
    """The command line: every command and option with its help, in plain text."""
    top = argparse.ArgumentParser(prog="webmcp-nb", description=DESCRIPTION, epilog=EPILOG)
    top.add_argument("--version", action="version", version=f"webmcp-nb {__version__}")
    sub = top.add_subparsers(dest="command", title="commands", metavar="COMMAND")

    demo = _command(sub, "demo", "launch headless Chromium on the bundled demo and call its tools")
    demo.add_argument("--headed", action="store_true", help="show the browser window")
    demo.add_argument("--native", action="store_true", help="use the browser's own WebMCP, not the polyfill")
    demo.add_argument("--report", default="webmcp-nb-demo-report.html", help="where to write the replay's report")
    demo.add_argument("--record", action="store_true", help="re-record the shipped demo session (maintainers)")
    demo.set_defaults(func=_demo)

    replay = _command(sub, "replay", "replay a recorded session; exits 1 when a result diverges")
    replay.add_argument("session", help="a session folder or its session.jsonl")
    replay.add_argument("--url", help="where to replay (default: the first page the session used)")
    replay.add_argument("--calls", action="store_true", help="repeat the tool calls only, not the agent turns")
    replay.add_argument("--ignore", action="append", default=[], help="a volatile field to skip, e.g. searchId")
    replay.add_argument("--tolerance", type=float, default=0.0, help="accept numbers this close")
    replay.add_argument(
        "--confirm",
        choices=["high", "medium", "always", "never"],
        help="the risks the replay asks about before a call, as an agent's confirm does; nobody answers here, so "
        "those calls are denied (default: high, or never with --allow-high-risk; the session's own policy is never "
        "used, high-risk calls are denied under every policy without --allow-high-risk)",
    )
    replay.add_argument(
        "--allow-high-risk",
        action="store_true",
        help="let the replay run high-risk tools (send, pay, delete, publish), and so every tool: with nobody to "
        "answer, a policy that asks about medium risk asks about high risk too",
    )
    replay.add_argument("--report", help="write the replay's HTML report here")
    replay.add_argument("--headed", action="store_true", help="show the browser window")
    replay.add_argument("--native", action="store_true", help="use the browser's own WebMCP, not the polyfill")
    replay.set_defaults(func=_replay)

    _eval_parser(sub)
    _ci_parsers(sub)

    relay = _command(sub, "relay", "run the relay in the foreground (wm.connect() starts it for you)")
    relay.add_argument("--port", type=int, default=None, help=PORT_HELP)
    relay.add_argument("--idle-exit", type=float, default=0, help="exit after this many seconds without clients")
    relay.set_defaults(func=_relay)

    mcp = _command(
        sub, "mcp", "a stdio MCP server: an MCP client (Claude Desktop, VS Code…) drives a tab through the relay"
    )
    _mcp_options(mcp)
    mcp.set_defaults(func=_mcp)

    _mcp_config_parser(sub)

    pair = _command(sub, "pair", "let the extension in your Chrome pair with this account (native messaging)")
    pair.add_argument(
        "--user-data-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="a browser's user-data folder (one that exists), repeatable (default: every one found)",
    )
    pair.add_argument(
        "--port",
        type=int,
        default=None,
        help="the relay port the extension should dial (default: $WEBMCP_NB_PORT, else 17830)",
    )
    pair.add_argument("--rotate", action="store_true", help="make a new secret (paired extensions re-pair)")
    pair.add_argument("--remove", action="store_true", help="uninstall the pairing host")
    pair.set_defaults(func=_pair)

    granting = _command(
        sub,
        "grants",
        "which sites of your Chrome agents and MCP clients may read or act on",
        description="Per-site grants (the file grants.json in the webmcp-nb home): read lets a model list a site's "
        "tools, call its read-only ones and take screenshots; act lets it call every tool (high-risk ones still "
        "ask each time). A site never granted asks first; none never asks and is refused.",
    )
    actions = granting.add_subparsers(dest="action", metavar="ACTION")
    _command(actions, "list", "every granted site (the default)")
    allow = _command(actions, "allow", "grant a site read or act")
    allow.add_argument("origin", help="the site, like https://bank.example (a path is dropped)")
    allow.add_argument("level", choices=["read", "act"], help="read, or act (which includes read)")
    for name, text in (("deny", "never, and never ask (level none)"), ("revoke", "forget: the site asks again")):
        _command(actions, name, text).add_argument("origin", help="the site, like https://bank.example")
    granting.set_defaults(func=_grants)

    doc = _command(sub, "doctor", "check the relay, the pairing and the browsers; each problem with its fix")
    doc.add_argument("--port", type=int, default=None, help=PORT_HELP)
    doc.add_argument(
        "--user-data-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="check the pairing of this browser folder, as given to pair; repeatable (default: every one found)",
    )
    doc.set_defaults(func=_doctor)

    listing = _command(sub, "browsers", "list the browsers connected to the relay (exits 1 when no relay runs)")
    listing.add_argument("--port", type=int, default=None, help=PORT_HELP)
    listing.set_defaults(func=_browsers)

    ext = _command(sub, "extension-path", "print where the unpacked extension is")
    ext.set_defaults(func=_extension_path)

    serve = _command(sub, "serve-demo", "serve the demo pages on 127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="the port to serve on (default: 8000)")
    serve.set_defaults(func=_serve_demo)
    return top


def _ask_seconds(text: str) -> float:
    """``--ask-timeout``: a number of seconds in (0, 600], the longest the relay lets an ask wait."""
    from .link.grant_asks import MAX_ASK_TIMEOUT  # the relay's modules load only for the commands that need them

    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= MAX_ASK_TIMEOUT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0 and at most 600")
    return seconds


def main(argv: Sequence[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        cli.print_help()
        return 0
    from .core.errors import WebMCPError

    try:
        return int(args.func(args))
    except UnsafeHomeError as exc:
        print(f"webmcp-nb {args.command}: {exc}", file=sys.stderr)
        return 1
    except WebMCPError as exc:  # said in the shell's words, without a traceback
        print(f"webmcp-nb {args.command}: {exc.code.value}: {_worded(exc)}", file=sys.stderr)
        return 2
