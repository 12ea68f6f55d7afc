"""A static file server on 127.0.0.1 for the bundled demo pages (and for tests' own pages).

``serve_demo()`` returns a running server; ``server.url("flights/")`` gives a page's address.
Routes map URL prefixes to folders; ``headers`` adds response headers by prefix (e.g. a strict CSP).
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["DemoServer", "serve_demo", "DEMO_PAGES"]

DEMO_PAGES = Path(__file__).parent / "pages"


class _Handler(http.server.SimpleHTTPRequestHandler):
    routes: Mapping[str, Path] = {}
    extra_headers: Mapping[str, Mapping[str, str]] = {}

    def translate_path(self, path: str) -> str:
        clean = unquote(urlsplit(path).path)
        for prefix in sorted(self.routes, key=len, reverse=True):
            if clean.startswith(prefix):
                root = self.routes[prefix].resolve()
                target = (root / clean[len(prefix) :].lstrip("/")).resolve()
                return str(target) if target.is_relative_to(root) else str(root / "__outside__")
        return str(Path("/nonexistent"))

    def end_headers(self) -> None:
        clean = urlsplit(self.path).path
        sent = {"cache-control": "no-store"}  # unless a route says otherwise: pages always fresh
        for prefix, headers in self.extra_headers.items():
            if clean.startswith(prefix):
                sent.update({name.lower(): value for name, value in headers.items()})
        for name, value in sent.items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


class DemoServer:
    """A threaded HTTP server; stop it with ``close()`` or use it as a context manager."""

    def __init__(
        self,
        routes: Mapping[str, Path] | None = None,
        *,
        port: int = 0,
        headers: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        handler = type(
            "Handler",
            (_Handler,),
            {"routes": dict(routes or {"/": DEMO_PAGES}), "extra_headers": dict(headers or {})},
        )
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(handler))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}/"
        threading.Thread(target=self._server.serve_forever, name="webmcp-nb-demo", daemon=True).start()

    def url(self, path: str = "") -> str:
        """The absolute URL of ``path`` on this server."""
        return self.base + path.lstrip("/")

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> DemoServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<DemoServer {self.base}>"


def serve_demo(port: int = 0) -> DemoServer:
    """Serve the bundled demo pages (flights, early-draft, declarative, shop) on 127.0.0.1."""
    return DemoServer(port=port)
