"""Skills: tools (and know-how for the agent) given to pages that have no WebMCP of their own.

On disk a skill is a folder::

    skills/<name>/SKILL.md   front matter: name, description, version, match (URL patterns), priority, config,
                             verified and smoke (for ``webmcp-nb lint --skill``); the body: instructions for the
                             agent while the skill is active
    skills/<name>/tools.js   defineTool({name, description, inputSchema, annotations, risk}, handler) calls and an
                             optional healthCheck(fn); `config` holds the front matter's config

tools.js runs in the page's DOM through the extension (Chrome's user-script world: the page's CSP does not
apply to it and page scripts cannot reach it). In Python a skill is that metadata plus named *fragments* of
tools.js; a cell can replace one fragment and re-inject (`%%webmcp_skill`), and ``save`` writes them back.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..core._loop import blocking, on_loop, warn
from ..core.agent_rules import Risk
from ..core.display import escape, table, visible
from ..core.errors import InvalidArgumentsError, SkillHealthError
from ..link.protocol import InstalledSkill, Method
from . import checked

if TYPE_CHECKING:
    from .browser import Browser
    from .tab import Tab

__all__ = ["Skill", "SkillRegistry", "InjectionResult", "SkillHealthWarning", "builtin_skills_path"]

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MARKER = re.compile(r"^// @webmcp-nb fragment (\S+)[ \t]*\n", re.M)
WHOLE_FILE = "tools.js"
HEALTH = "health-check"
_FRONT_KEYS = {"name", "description", "version", "match", "priority", "config"}
"""The front matter a ``Skill`` reads; the rest is kept in ``extra``."""


class SkillHealthWarning(UserWarning):
    """A skill was not registered in some tab because its health check failed there."""


@dataclass(frozen=True)
class InjectionResult:
    """What happened when a skill ran in one tab (what ``tab.inject`` and the ``%%webmcp_skill`` magic show)."""

    tab_id: int
    ok: bool
    reason: str | None
    tools: tuple[str, ...]
    skill: str = ""

    def __str__(self) -> str:
        name = f"skill {self.skill!r}" if self.skill else "the skill"
        if not self.ok:
            return visible(f"{name} is not active in tab {self.tab_id}: {self.reason}")
        tools = ", ".join(self.tools) if self.tools else "none"
        return visible(f"{name} is active in tab {self.tab_id}; its tools: {tools}")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        mark = "✔" if self.ok else "✖"
        tools = "".join(f" <code>{escape(name)}</code>" for name in self.tools)
        name = f"<b>{escape(self.skill)}</b>" if self.skill else "the skill"
        if self.ok:
            html = f"<div>{mark} {name} is active in tab {self.tab_id}; its tools:{tools or ' none'}</div>"
        else:
            html = f"<div>{mark} {name} is not active in tab {self.tab_id}: {escape(self.reason)}</div>"
        return {"text/plain": f"{mark} {self}", "text/html": html}


def builtin_skills_path() -> Path:
    """The skills shipped with webmcp-nb (``skills/`` of a checkout, or inside the installed package)."""
    packaged = Path(__file__).resolve().parents[1] / "_skills"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "skills"


def _split_fragments(source: str) -> dict[str, str]:
    marks = list(MARKER.finditer(source))
    if not marks:
        return {WHOLE_FILE: source} if source.strip() else {}
    fragments: dict[str, str] = {}
    if source[: marks[0].start()].strip():
        fragments[WHOLE_FILE] = source[: marks[0].start()].rstrip() + "\n"
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        end = following.start() if following else len(source)
        fragments[mark.group(1)] = source[mark.end() : end].rstrip() + "\n"
    return fragments


class Skill:
    """A skill: metadata from SKILL.md and the JavaScript of tools.js, in named fragments.

    Build one in Python (``Skill("shop", match=["*://shop.example/*"])`` then ``add_tool``), or
    ``Skill.load("skills/shop")``; inject it with ``tab.inject(skill)``; after an edit, ``skill.reload()``
    re-runs it in every tab it lives in without reloading the pages.
    """

    def __init__(
        self,
        name: str,
        *,
        match: list[str] | tuple[str, ...] | str = (),
        description: str = "",
        version: str = "0.1.0",
        priority: float = 0,
        instructions: str = "",
        config: Mapping[str, Any] | None = None,
        tools_js: str = "",
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if not NAME.match(name):
            raise InvalidArgumentsError(f"skill name {name!r}: use 1-64 letters, digits, '_', '.' or '-'", field="name")
        self.name = name
        self.match = [match] if isinstance(match, str) else list(match)
        self.description = description
        self.version = version
        self.priority = priority
        self.instructions = instructions
        self.config: dict[str, Any] = dict(config or {})
        self.extra: dict[str, Any] = dict(extra or {})
        """Front matter this class does not read (``verified``, ``smoke``: what lint checks), kept as it is and
        written back by ``save``."""
        self.path: Path | None = None
        self._fragments = _split_fragments(tools_js)
        self._last_tab: Tab | None = None

    # ----- on disk -----

    @classmethod
    def load(cls, path: str | Path) -> Skill:
        """Read ``<path>/SKILL.md`` and ``<path>/tools.js`` (``path`` may also name SKILL.md itself)."""
        folder = Path(path)
        if folder.name == "SKILL.md":
            folder = folder.parent
        text = (folder / "SKILL.md").read_text(encoding="utf-8")
        front, body = _front_matter(text, folder / "SKILL.md")
        tools = folder / "tools.js"
        skill = cls(
            str(front.get("name") or folder.name),
            match=front.get("match") or [],
            description=str(front.get("description") or ""),
            version=str(front.get("version") or "0.1.0"),
            priority=float(front.get("priority") or 0),
            config=front.get("config") or {},
            instructions=body.strip(),
            tools_js=tools.read_text(encoding="utf-8") if tools.exists() else "",
            extra={key: value for key, value in front.items() if key not in _FRONT_KEYS},
        )
        skill.path = folder
        return skill

    @classmethod
    def builtin(cls, name: str) -> Skill:
        """One of the skills shipped with webmcp-nb: ``dom``, ``shop``, ``search-form``."""
        return cls.load(builtin_skills_path() / name)

    def save(self, directory: str | Path | None = None) -> Path:
        """Write SKILL.md and tools.js into ``directory`` (default: where it was loaded from)."""
        target = Path(directory) if directory is not None else self.path
        if target is None:
            raise InvalidArgumentsError("save(directory): this skill was not loaded from a folder", field="directory")
        target.mkdir(parents=True, exist_ok=True)
        front: dict[str, Any] = {"name": self.name, "description": self.description, "version": self.version}
        front["match"] = self.match
        if self.priority:
            front["priority"] = self.priority
        if self.config:
            front["config"] = self.config
        front.update({key: value for key, value in self.extra.items() if key not in _FRONT_KEYS})
        dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
        (target / "SKILL.md").write_text(f"---\n{dumped}---\n\n{self.instructions.strip()}\n", encoding="utf-8")
        (target / "tools.js").write_text(self.tools_js, encoding="utf-8")
        self.path = target
        return target

    # ----- tools.js -----

    @property
    def fragments(self) -> Mapping[str, str]:
        """tools.js by fragment name; a hand-written file is the single fragment ``tools.js``."""
        return dict(self._fragments)

    @property
    def tools_js(self) -> str:
        """The whole tools.js: fragments in order, each after a marker line that ``load`` splits on."""
        parts = []
        for key, source in self._fragments.items():
            body = source.rstrip() + "\n"
            parts.append(body if key == WHOLE_FILE else f"// @webmcp-nb fragment {key}\n{body}")
        return "\n".join(parts)

    def define(self, key: str, source: str) -> Skill:
        """Set fragment ``key`` of tools.js to ``source`` (JavaScript), replacing any earlier one."""
        if not re.fullmatch(r"\S+", key):
            raise InvalidArgumentsError(f"fragment name {key!r} may not contain spaces", field="key")
        self._fragments[key] = source.strip() + "\n"
        return self

    def remove(self, key: str) -> Skill:
        """Drop fragment ``key`` (for example a tool added with ``add_tool``)."""
        self._fragments.pop(key, None)
        return self

    def add_tool(
        self,
        name: str,
        handler: str,
        *,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
        annotations: Mapping[str, Any] | None = None,
        title: str | None = None,
        read_only: bool | None = None,
        risk: Risk | None = None,
    ) -> Skill:
        """Add (or replace) a tool whose ``handler`` is JavaScript: ``"async ({query}) => {...}"``.

        The handler runs in the page with the tool's input and returns a JSON-able value (or throws).
        ``risk="high"`` marks a tool that submits, sends, pays, deletes or publishes: agents always ask first.
        """
        meta: dict[str, Any] = {"name": name, "description": description}
        if title:
            meta["title"] = title
        meta["inputSchema"] = dict(input_schema or {"type": "object", "properties": {}})
        notes = dict(annotations or {})
        if read_only is not None:
            notes["readOnlyHint"] = read_only
        if notes:
            meta["annotations"] = notes
        if risk is not None:
            meta["risk"] = risk
        return self.define(name, f"defineTool({json.dumps(meta, indent=2)}, {handler.strip()});")

    def health_check(self, function: str) -> Skill:
        """Set the health check: a JavaScript function returning true, or false / a reason string."""
        return self.define(HEALTH, f"healthCheck({function.strip()});")

    def configure(self, **config: Any) -> Skill:
        """Set values of ``config`` (what tools.js reads as ``config``), e.g. selectors of a reusable skill."""
        self.config.update(config)
        return self

    def wire(self) -> dict[str, Any]:
        """The skill as the extension receives it."""
        return {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "match": self.match,
            "priority": self.priority,
            "config": self.config,
            "source": self.tools_js,
        }

    # ----- live -----

    @on_loop
    async def areload(self) -> list[InjectionResult]:
        """Send the current definition to every browser it is installed in and re-run it in every tab it
        lives in, without reloading the pages: old definitions are replaced, never duplicated."""
        results: list[InjectionResult] = []
        for registry in list(_registries.values()):
            if registry.source(self.name) is self and registry._browser.connected:
                results += await registry.ainstall(self)
        return results

    reload = blocking(areload)

    def __repr__(self) -> str:
        return f"<Skill {self.name} {self.version} match={self.match} fragments={list(self._fragments)}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        rows = [[self.name, self.version, ", ".join(self.match), ", ".join(self._fragments), self.description]]
        return {
            "text/plain": repr(self),
            "text/html": table(["skill", "version", "match", "fragments", "description"], rows),
        }


def _front_matter(text: str, where: Path) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        raise InvalidArgumentsError(f"{where}: SKILL.md must start with YAML front matter between '---' lines")
    try:
        _, front, body = text.split("---", 2)
        data = yaml.safe_load(front) or {}
    except (ValueError, yaml.YAMLError) as exc:
        raise InvalidArgumentsError(f"{where}: bad front matter: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidArgumentsError(f"{where}: front matter must be a mapping")
    return data, body


class SkillRegistry(Mapping[str, InstalledSkill]):
    """``browser.skills``: the skills installed in a browser, and the switches for them.

    The one owner of what this process knows of them: the browser says which are installed (its ``info``), and
    the registry keeps the :class:`Skill` each was installed from here (:meth:`source`), for its instructions and
    for :meth:`Skill.reload`."""

    def __init__(self, browser: Browser) -> None:
        self._browser = browser
        self._sources: dict[str, Skill] = {}
        _registries[id(self)] = self

    def source(self, name: str) -> Skill | None:
        """The :class:`Skill` installed as ``name`` from this process (``None`` if another process installed it)."""
        return self._sources.get(name)

    def _current(self) -> dict[str, InstalledSkill]:
        info = self._browser.info
        return {s.name: s for s in (info.skills if info else [])}

    def __getitem__(self, name: str) -> InstalledSkill:
        return self._current()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    @on_loop
    async def ainstall(self, skill: Skill, *, tab: Tab | None = None) -> list[InjectionResult]:
        """Install ``skill`` (auto-injected on every load of a matching URL) and run it now in every open
        matching tab, and in ``tab``. Tabs where its health check fails get no tools; they are reported in
        the results and by a :class:`SkillHealthWarning`. Injected for a model whose grant check read ``tab``'s site
        (:mod:`.checked`), it runs there only in the document that shows that site, or raises ``NavigatedError``
        having installed nothing."""
        params: dict[str, Any] = {"skill": skill.wire()}
        if tab is not None:
            site = checked.site_of(tab.id)
            params |= {"tabId": tab.id, **({"site": site} if site is not None else {})}
        reply = await self._browser._request(Method.SKILL_INSTALL, params, 30.0)
        self._sources[skill.name] = skill
        results = [
            InjectionResult(r["tabId"], bool(r.get("ok")), r.get("reason"), tuple(r.get("tools") or []), skill.name)
            for r in reply["results"]
        ]
        for result in results:
            if result.ok:
                self._browser.events.emit(
                    "skill.injected",
                    tab_id=result.tab_id,
                    skill=skill.name,
                    version=skill.version,
                    tools=list(result.tools),
                )
            else:
                self._browser.events.emit(
                    "skill.failed", tab_id=result.tab_id, skill=skill.name, version=skill.version, reason=result.reason
                )
            if not result.ok and (tab is None or result.tab_id != tab.id):  # that tab's caller raises instead
                warn(f"skill {skill.name!r} is not active in tab {result.tab_id}: {result.reason}", SkillHealthWarning)
        return results

    install = blocking(ainstall)

    async def _update(self, name: str, **changes: Any) -> None:
        if name not in self._current():
            raise KeyError(f"no skill {name!r} installed; installed: {', '.join(self._current()) or 'none'}")
        await self._browser._request(Method.SKILL_UPDATE, {"name": name, **changes}, 10.0)

    @on_loop
    async def aenable(self, name: str) -> None:
        """Show the skill's tools again."""
        await self._update(name, enabled=True)

    enable = blocking(aenable)

    @on_loop
    async def adisable(self, name: str) -> None:
        """Hide all of the skill's tools (it stays installed)."""
        await self._update(name, enabled=False)

    disable = blocking(adisable)

    @on_loop
    async def adisable_tool(self, name: str, tool: str) -> None:
        """Hide one tool of a skill."""
        current = self._current()[name].disabled_tools if name in self._current() else []
        await self._update(name, disabledTools=sorted({*current, tool}))

    disable_tool = blocking(adisable_tool)

    @on_loop
    async def aenable_tool(self, name: str, tool: str) -> None:
        """Show a tool hidden with ``disable_tool``."""
        current = self._current()[name].disabled_tools if name in self._current() else []
        await self._update(name, disabledTools=[t for t in current if t != tool])

    enable_tool = blocking(aenable_tool)

    @on_loop
    async def auninstall(self, name: str) -> None:
        """Remove the skill: no more injection, its tools disappear from every tab."""
        await self._browser._request(Method.SKILL_UNINSTALL, {"name": name}, 10.0)
        self._sources.pop(name, None)

    uninstall = blocking(auninstall)

    def __repr__(self) -> str:
        return f"SkillRegistry({', '.join(self._current()) or 'none installed'})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        rows = [
            [s.name, s.version, "yes" if s.enabled else "no", ", ".join(s.match), ", ".join(s.disabled_tools)]
            for s in self._current().values()
        ]
        html = table(["skill", "version", "enabled", "match", "disabled tools"], rows, "Installed skills")
        return {"text/plain": repr(self), "text/html": html}


_registries: weakref.WeakValueDictionary[int, SkillRegistry] = weakref.WeakValueDictionary()  # for Skill.reload


def check_health(tab_id: int, skill: Skill, results: list[InjectionResult]) -> InjectionResult:
    """The result for ``tab_id``; raises :class:`SkillHealthError` with the reason when it failed there."""
    for result in results:
        if result.tab_id == tab_id:
            if not result.ok:
                raise SkillHealthError(f"skill {skill.name!r} was not registered in tab {tab_id}: {result.reason}")
            return result
    raise SkillHealthError(f"skill {skill.name!r} did not run in tab {tab_id}")
