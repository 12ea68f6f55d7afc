"""What a notebook shows of a browser: the ipywidgets panel (``panel()``: status, inspector and its form, chat,
skills, log, confirmation and asking cards, MCP sessions, sites) and the ``%%webmcp_skill`` cell magic.

Uses: core, link, browser, agent.
"""

from .form import SchemaForm
from .panel import Panel, panel

__all__ = ["Panel", "SchemaForm", "panel"]
