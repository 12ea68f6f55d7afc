"""IPython magic for the skill edit → run loop: ``%load_ext webmcp_nb``, then a cell such as::

    %%webmcp_skill shop searchProducts --tab tab
    defineTool({name: "searchProducts", description: "...", inputSchema: {...}},
               async ({query}) => { ... });

sets fragment ``searchProducts`` of the skill held in the variable ``shop`` to the cell's JavaScript and
injects the skill into the tab (by default the tab it was last injected into). Run the cell again after
an edit: the page keeps its state and the old definition is replaced.
"""

from __future__ import annotations

from typing import Any

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from ..browser.skills import InjectionResult, Skill

__all__ = ["SkillMagics", "load_ipython_extension"]


@magics_class
class SkillMagics(Magics):
    @magic_arguments()
    @argument("skill", help="name of the variable holding a webmcp_nb.Skill")
    @argument("fragment", help="which part of tools.js this cell defines (usually the tool's name)")
    @argument("--tab", help="name of the variable holding the Tab to inject into")
    @cell_magic
    def webmcp_skill(self, line: str, cell: str) -> InjectionResult:
        """Define one fragment of a skill's tools.js from this cell and inject the skill into a tab."""
        args = parse_argstring(self.webmcp_skill, line)
        skill = self._lookup(args.skill, Skill)
        from ..browser.tab import Tab

        tab = self._lookup(args.tab, Tab) if args.tab else skill._last_tab
        if tab is None:
            raise ValueError(f"no tab to inject {args.skill!r} into: pass --tab TAB the first time")
        skill.define(args.fragment, cell)
        result: InjectionResult = tab.inject(skill)
        return result

    def _lookup(self, name: str, kind: type) -> Any:
        value = self.shell.user_ns.get(name) if self.shell else None
        if not isinstance(value, kind):
            raise ValueError(f"{name!r} is not a {kind.__name__} in this notebook (got {type(value).__name__})")
        return value


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(SkillMagics)
