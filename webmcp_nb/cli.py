"""The ``webmcp-nb`` command: ``demo``, ``relay``, ``extension-path``, ``serve-demo``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Sequence

from .home import home, read_token, relay_port

__all__ = ["main"]


def _relay(args: argparse.Namespace) -> int:
    from .relay import Relay

    logging.basicConfig(level=logging.INFO, format="%(asctime)s relay %(message)s")
    idle = args.idle_exit if args.idle_exit > 0 else None

    async def run() -> None:
        try:
            relay = await Relay(read_token(), port=relay_port(args.port), idle_timeout=idle).start()
        except OSError as exc:
            print(f"webmcp-nb relay: cannot listen on 127.0.0.1:{relay_port(args.port)}: {exc}", file=sys.stderr)
            raise SystemExit(1) from None
        print(f"webmcp-nb relay listening on ws://127.0.0.1:{relay.port}", flush=True)
        pid_file = home() / f"relay-{relay.port}.pid"
        pid_file.write_text(f"{os.getpid()}\n")
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: asyncio.ensure_future(relay.close()))
        try:
            await relay.serve_forever()
        finally:
            pid_file.unlink(missing_ok=True)

    asyncio.run(run())
    return 0


def _extension_path(args: argparse.Namespace) -> int:
    from .chromium import extension_path

    print(extension_path())
    return 0


def _serve_demo(args: argparse.Namespace) -> int:
    from .demo_server import serve_demo

    server = serve_demo(args.port)
    print(f"demo pages on {server.base} (Ctrl-C to stop)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        signal.pause()
    server.close()
    return 0


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(headless=not args.headed, native_webmcp=args.native)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="webmcp-nb", description=__doc__)
    sub = parser.add_subparsers(dest="command")

    demo = sub.add_parser("demo", help="launch headless Chromium on the bundled demo and call its tools")
    demo.add_argument("--headed", action="store_true", help="show the browser window")
    demo.add_argument("--native", action="store_true", help="use the browser's own WebMCP, not the polyfill")
    demo.set_defaults(func=_demo)

    relay = sub.add_parser("relay", help="run the relay in the foreground (wm.connect() starts it for you)")
    relay.add_argument("--port", type=int, default=None, help="default: $WEBMCP_NB_PORT or 17830")
    relay.add_argument("--idle-exit", type=float, default=0, help="exit after this many seconds without clients")
    relay.set_defaults(func=_relay)

    ext = sub.add_parser("extension-path", help="print where the unpacked extension is")
    ext.set_defaults(func=_extension_path)

    serve = sub.add_parser("serve-demo", help="serve the demo pages on 127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(func=_serve_demo)

    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["demo"])
    return args.func(args)
