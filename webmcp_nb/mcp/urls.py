"""Which URLs an MCP client may have the browser open (``open_tab``, ``navigate``, ``--url``): http, https and
about:blank; file: only when the user started the server with ``--allow-file-urls``; never data:, javascript:,
chrome: or any other scheme. A model steered by a page must not open ``file:///…/id_ed25519`` and read it back
through a skill. The notebook user's own ``browser.open()`` keeps every URL: this is the MCP face's rule."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..core.errors import PermissionDeniedError

__all__ = ["check_url", "OPEN_SCHEMES"]

OPEN_SCHEMES = ("http", "https")
"""Schemes an MCP client may open (and ``about:blank``)."""


def check_url(url: str, *, allow_file_urls: bool = False) -> str:
    """``url`` if an MCP client may open it, else ``PermissionDeniedError`` naming the scheme and the opt-in."""
    scheme = urlsplit(url.strip()).scheme.lower()
    if scheme in OPEN_SCHEMES or url.strip() == "about:blank" or (scheme == "file" and allow_file_urls):
        return url
    what = f"{scheme}: URLs are" if scheme else f"{url[:200]!r} is not an absolute URL, and relative URLs are"
    if allow_file_urls:
        allowed = "http, https, about:blank and file: (this server was started with --allow-file-urls)"
    else:
        allowed = (
            "http, https and about:blank (file: URLs too when the user starts the server with "
            "`webmcp-nb mcp --allow-file-urls`)"
        )
    raise PermissionDeniedError(f"{what} not opened for MCP clients: only {allowed}.")
