"""Which bridged calls run without asking the user: none, unless the user opted in.

The chat page owns its DOM, so any call the bridge reads there may be the page's own (a script can write into the
assistant's reply). Every call therefore asks in the side panel or the notebook panel, where the page can neither
draw nor click. A user who trusts a chat site may let its read-only calls run unasked — for the whole bridge
(``auto_run="read-only"``) or per source (``auto_run={"time": "read-only"}``: an MCP server by its name, another
tab's page tools by their site's origin). That opt-in lets the page run those tools and read their results; tools
that change something always ask.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..browser.tab import Tab
from ..browser.tools import Tool
from ..core.errors import ConfigurationError
from ..link.grants import origin_of

if TYPE_CHECKING:
    from ..mcp.client import MCPTool

__all__ = ["AutoRun", "AUTO_RUN", "RunPolicy", "source_key"]

AutoRun = Literal["never", "read-only"]
AUTO_RUN: tuple[AutoRun, ...] = ("never", "read-only")
"""``never``: every call asks (the default); ``read-only``: calls of read-only tools run unasked."""


def source_key(tool: Tool | MCPTool) -> str:
    """The name a tool's source goes by in ``auto_run``: its MCP server's name, or its frame's origin."""
    if isinstance(tool, Tool):
        return tool.origin or ""
    return str(tool.server.name)


@dataclass(frozen=True)
class RunPolicy:
    """The bridge's ``auto_run``, resolved: a level for every source, and one for the sources not named."""

    default: AutoRun = "never"
    sources: dict[str, AutoRun] = field(default_factory=dict)

    @classmethod
    def of(cls, auto_run: Any, servers: Sequence[Any]) -> RunPolicy:
        """``auto_run`` as given to ``chat_bridge``; ``ConfigurationError`` naming what does not fit."""
        if isinstance(auto_run, str):
            return cls(_level(auto_run, "auto_run"))
        if not isinstance(auto_run, Mapping):
            raise ConfigurationError(
                f"auto_run must be one of {', '.join(AUTO_RUN)} or a dict of them by source, "
                f"not {type(auto_run).__name__}"
            )
        known = {origin_of(s.url) or "" if isinstance(s, Tab) else str(getattr(s, "name", "")) for s in servers}
        sources: dict[str, AutoRun] = {}
        for key, value in auto_run.items():
            if key not in known:
                names = ", ".join(sorted(k for k in known if k)) or "none"
                raise ConfigurationError(
                    f"auto_run names {key!r}, which is not a source of this bridge (an MCP server's name or a tab's "
                    f"origin): {names}"
                )
            sources[str(key)] = _level(value, f"auto_run[{key!r}]")
        return cls("never", sources)

    def runs_unasked(self, tool: Tool | MCPTool) -> bool:
        """Whether a call of ``tool`` runs without the user's answer: a read-only tool of a source opted in."""
        return tool.read_only and self.sources.get(source_key(tool), self.default) == "read-only"

    def describe(self) -> str | dict[str, str]:
        """As events record it: the level, or the levels by source."""
        return dict(self.sources) if self.sources else self.default

    def __str__(self) -> str:
        unasked = [key for key, level in self.sources.items() if level == "read-only"]
        if self.default == "read-only":
            return "read-only calls run unasked"
        if unasked:
            return f"read-only calls of {', '.join(unasked)} run unasked"
        return "every call asks"


def _level(value: Any, where: str) -> AutoRun:
    for level in AUTO_RUN:
        if value == level:
            return level
    raise ConfigurationError(f"{where} must be one of {', '.join(AUTO_RUN)}, not {value!r}")
