"""Where this Python's installed commands are: pip puts a package's scripts (``webmcp-nb``, ``mcp-server-time``) in
the interpreter's scripts folder (a virtualenv's ``bin/``), a folder that a kernel's or a desktop app's ``PATH``
often lacks. Commands are looked for there first, by absolute path, so they start whatever ``PATH`` says."""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path

__all__ = ["installed_script", "scripts_folders"]


def scripts_folders() -> list[str]:
    """This interpreter's scripts folders: sysconfig's, and the interpreter's own folder (a virtualenv's ``bin/``)."""
    return list(dict.fromkeys((sysconfig.get_path("scripts"), str(Path(sys.executable).parent))))


def installed_script(name: str) -> str | None:
    """The absolute path of the command ``name`` installed beside this Python, or ``None`` when it is not there."""
    for folder in scripts_folders():
        found = shutil.which(name, path=folder)
        if found:
            return str(Path(found).absolute())
    return None
