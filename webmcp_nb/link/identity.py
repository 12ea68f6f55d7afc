"""Names the relay, the extension and the native-messaging host agree on. Standard library only."""

from __future__ import annotations

__all__ = ["EXTENSION_ID", "EXTENSION_ORIGIN", "HOST_NAME", "DEFAULT_PORT"]

EXTENSION_ID = "fplfpdibakppaigkgefcfokekegeonli"
"""The extension's id, fixed by the ``key`` in its manifest."""

EXTENSION_ORIGIN = f"chrome-extension://{EXTENSION_ID}"
"""The origin the extension's pages and worker present."""

HOST_NAME = "com.webmcp_nb.host"
"""The native-messaging host that hands the extension the pairing secret (``webmcp-nb pair`` installs it)."""

DEFAULT_PORT = 17830
"""Where the relay listens on 127.0.0.1 unless told otherwise (``WEBMCP_NB_PORT``)."""
