"""ipywidgets views of a browser's session: ``panel()`` and its parts."""

from .form import SchemaForm
from .panel import Panel, panel

__all__ = ["Panel", "SchemaForm", "panel"]
