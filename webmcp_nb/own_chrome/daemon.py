"""Starting the relay daemon (``webmcp-nb relay``), for ``connect()`` and for the native-messaging host, which
starts it when the side panel needs the relay (it keeps the user's site grants) and none runs. Standard library and
:mod:`webmcp_nb.link.home` only: the host must start fast."""

from __future__ import annotations

import socket
import subprocess
import sys

from ..link.home import append_private, home

__all__ = ["start_daemon", "ensure_daemon", "DAEMON_IDLE_EXIT"]

DAEMON_IDLE_EXIT = 600.0
"""Seconds a daemon stays up with no client connected."""


def start_daemon(port: int, idle_exit: float = DAEMON_IDLE_EXIT) -> subprocess.Popen[bytes]:
    """Start ``webmcp-nb relay`` detached from this process, logging to ``<home>/relay.log``."""
    with append_private(home() / "relay.log") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "webmcp_nb", "relay", "--port", str(port), "--idle-exit", str(idle_exit)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )


def ensure_daemon(port: int) -> bool:
    """Start the daemon on ``port`` unless something listens there already; whether it started one. Whatever
    listens must still prove the pairing secret to whoever dials it."""
    with socket.socket() as probe:
        probe.settimeout(1.0)
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            return False
    start_daemon(port)
    return True
