"""The tools of a launched browser's pages as the DevTools protocol's ``WebMCP`` domain reports them.

Every page target (a tab) and every cross-origin iframe target is attached as it appears (``Target.setAutoAttach``,
paused until ``Page`` and ``WebMCP`` are enabled on it, so no registration is missed). ``WebMCP.toolsAdded`` and
``toolsRemoved`` say what each frame registers; the protocol does not say which document, and does not remove a
document's tools when it goes, so ``Page`` events keep each frame's document (its ``loaderId``): a navigation ends
the frame's tools (and its iframes'), except that a document restored from the back/forward cache announces its
tools just before its navigation commits, and keeps them. A cross-origin iframe's own session alone speaks for its
frame: its parent's, attached first, may still tell of the frame as it was before it left that process.

The protocol's ``Tool`` has no title, so titles are read in an isolated world of the frame (``getTools()`` there,
out of the page scripts' reach). That listing costs the page time in proportion to all its tools, so a tool new to
its document is held back until its title is read only while the frame is small (:data:`HOLD_CHARS`; 1,000 plain
tools are well under it); a tool registered again that had no title, or any tool of a larger frame, is shown at
once, and its title (if it now has one) added once the frame has been quiet for :data:`QUIET` seconds. A change
is told to the relay (``emit``) once for each tab and turn of the loop, in the relay's words (:mod:`.tools`). Which
tab a target is, the relay learns from the extension (``bind``).

The browser reports each registration as it happens, in order, but a document's tools registered before the
session followed it (a new tab's first page can run before its target is attached; a page back from the
back/forward cache) come all at once, sorted by name. Those wait until the extension, whose bridge saw each
registration, tells their order (``ask``), at most :data:`ORDER_WAIT` seconds.

``WebMCP.enable`` reports what a session's root frame (the tab's top frame, a cross-origin iframe's own) registered
before it, but not what the session's other frames did (Chromium 156: a same-origin iframe of a page that ran before
the pipe followed it), and a document back from the back/forward cache announces its own tools, not its iframes':
those frames' tools are read from each frame itself (``getTools()`` in its isolated world), and join as if the
browser had reported them all at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..link._sockets import spawn
from ..link.protocol import ToolKey
from .pipe import CommandError, Pipe
from .tools import MAX_TOOLS, Frame, listed_tool, wire_tool

__all__ = ["Pages", "Target", "Emit", "Ask"]

log = logging.getLogger(__name__)

Emit = Callable[[int, list[ToolKey], list[dict[str, Any]], int], None]
"""``emit(tab id, removed keys, upserted tools, tools left out)``: what changed in a tab's native tools."""
Ask = Callable[[int], Awaitable[list[Any]]]
"""``ask(tab id)``: the order in which the tab's frames registered their tools, as the extension saw them
(``[{frameId, url, names}]``, unchecked)."""

WORLD = "webmcp-nb"
TITLE_WAIT = 2.0
"""Seconds new tools wait for their titles; a page too busy to answer shows them without (their titles follow if it
answers when asked again)."""
HOLD_CHARS = 1_000_000
"""A frame's size (its tools' characters) up to which new tools wait for their titles before they are shown."""
QUIET = 0.05
"""Seconds a larger frame must have added no tool before its new tools' titles are read."""
EMIT_EVERY = 0.01
"""Seconds between two changes told to the relay while a page keeps changing its tools (a call's result, and a tab
action's reply, tell it at once what it must show)."""
ORDER_WAIT = 2.0
"""Seconds tools the browser reported all at once wait for their order (then they are shown in the browser's)."""
SETTLE_WAIT = 2.0
"""Seconds ``settled`` waits for a tab's sessions to answer (a hung page must not hold up a navigation's reply)."""
TITLES = """(async () => {
  const titles = {};
  const mc = document.modelContext;
  if (!mc || typeof mc.getTools !== 'function') return titles;
  for (const tool of await mc.getTools()) {
    if ((!tool.window || tool.window === window) && typeof tool.title === 'string' && tool.title) {
      titles[tool.name] = tool.title.slice(0, 200);
    }
  }
  return titles;
})()"""
"""Run in the frame's isolated world: its tools' titles (the page cannot patch ``getTools`` there)."""
LISTING = """(async () => {
  const mc = document.modelContext;
  if (!mc || typeof mc.getTools !== 'function') return [];
  return (await mc.getTools()).filter((tool) => tool.window === window).map((tool) => ({
    name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema,
    annotations: tool.annotations,
  }));
})()"""
"""Run in the frame's isolated world: the tools it registered (not its iframes'), as ``getTools()`` lists them."""
LIST_WAIT = 10.0
"""Seconds a frame's own listing of its tools may take (a page too busy to answer keeps what the browser said)."""


@dataclass
class Target:
    """A tab's page as the protocol shows it: its frames (those of its cross-origin iframes' sessions too), and
    what the relay was told of their tools."""

    id: str
    session: str
    tab_id: int | None = None
    sessions: set[str] = field(default_factory=set)
    roots: dict[str, str] = field(default_factory=dict)
    """Frame id → the session of the cross-origin iframe it is the root of: that session alone speaks for it (its
    parent's may still tell of the frame as it was before it left that process), until a document commits in the
    frame in another session's process."""
    frames: dict[str, Frame] = field(default_factory=dict)
    numbers: dict[int, Frame] = field(default_factory=dict)
    next_number: int = 1
    emitted: dict[ToolKey, dict[str, Any]] = field(default_factory=dict)
    omitted: int = 0
    dirty: dict[ToolKey, None] = field(default_factory=dict)
    untitled: dict[str, dict[str, tuple[int, bool]]] = field(default_factory=dict)
    """Frame id → names whose titles are to be read: the change that made each one new, and whether it is held
    back until then."""
    added: float = 0.0
    """When a tool last joined (the loop's clock)."""
    flushed: float = float("-inf")
    """When the relay was last told (the loop's clock)."""
    reading: bool = False
    ordering: bool = False
    listing: int = 0
    """Frames whose tools are being read from the frame itself (``WebMCP.enable`` did not report them)."""
    soon: bool = False
    waiting: list[Callable[[], None]] = field(default_factory=list)
    """What runs once the relay has been told everything the target reported so far."""

    def frame(self, frame_id: str, session: str) -> Frame:
        found = self.frames.get(frame_id)
        if found is None:
            if frame_id == self.id:
                number = 0
            else:
                number, self.next_number = self.next_number, self.next_number + 1
            found = self.frames[frame_id] = self.numbers[number] = Frame(frame_id, number, session)
        return found

    def speaks(self, session: str, frame_id: str) -> bool:
        """Whether ``session`` speaks for the frame (not a parent's session telling of a frame now out of its
        process)."""
        return self.roots.get(frame_id, session) == session

    @property
    def holding(self) -> bool:
        """Whether some of its tools are held back until their titles are read."""
        return any(self._holds(fid, names) for fid, names in self.untitled.items())

    def _holds(self, fid: str, names: dict[str, tuple[int, bool]]) -> bool:
        frame = self.frames.get(fid)
        return frame is not None and frame.chars <= HOLD_CHARS and any(held for _, held in names.values())

    @property
    def shown(self) -> bool:
        """Whether the relay has been told everything (nothing changed since, nothing held back)."""
        return not self.dirty and not self.holding and not self.listing

    def held(self, frame: Frame, name: str) -> bool:
        """Whether ``name`` waits for its title: a tool new to a frame that is still small (one that grew past
        :data:`HOLD_CHARS` meanwhile, a page registering thousands, shows what it held at once)."""
        entry = self.untitled.get(frame.id, {}).get(name)
        return entry is not None and entry[1] and frame.chars <= HOLD_CHARS


class Pages:
    """The mirror: targets by session, by id and by tab."""

    def __init__(self, pipe: Pipe, emit: Emit, on_gone: Callable[[set[str]], None], ask: Ask) -> None:
        self._pipe = pipe
        self._emit = emit
        self._ask = ask
        self._on_gone = on_gone  # frames whose document went: their calls fail
        self._sessions: dict[str, Target] = {}
        self._targets: dict[str, Target] = {}
        self._tabs: dict[int, Target] = {}
        self._bound: dict[str, int] = {}  # target id → tab id, as the extension said (maybe before it attached)

    def target_of(self, tab_id: int) -> Target | None:
        return self._tabs.get(tab_id)

    # ----- which tab is which target (the extension says) -----

    def bind(self, tab_id: int, target_id: str | None) -> tuple[list[dict[str, Any]], int]:
        """Tab ``tab_id`` shows target ``target_id`` (``None``: no longer known): its whole list of tools now (in the
        order the relay was told them, when it is the target the tab showed before: a restarted extension asks
        again), and how many were left out. Later changes are emitted."""
        old = self._tabs.get(tab_id)
        target = self._targets.get(target_id) if target_id is not None else None
        if old is not None and old is not target:
            old.tab_id, old.emitted, old.omitted = None, {}, 0
            del self._tabs[tab_id]
        self._bound = {t: tab for t, tab in self._bound.items() if tab != tab_id}
        if target_id is not None:
            self._bound[target_id] = tab_id
        if target is None:
            return [], 0
        if target.tab_id != tab_id:
            target.tab_id, target.emitted = tab_id, {}
            self._tabs[tab_id] = target
            every = [
                (f.number, name) for f in sorted(target.frames.values(), key=lambda f: f.number) for name in f.tools
            ]
            target.dirty = dict.fromkeys(every) | target.dirty
        target.omitted = self._collect(target, [], [])
        self._changed(target)  # what waits for its titles follows
        return sorted(target.emitted.values(), key=lambda tool: tool["frameId"]), target.omitted

    # ----- events -----

    def event(self, method: str, params: dict[str, Any], session: str | None) -> None:
        if method == "Target.attachedToTarget":
            self._attached(params, session)
            return
        if method == "Target.detachedFromTarget":
            self._detached(str(params.get("sessionId")))
            return
        target = self._sessions.get(session) if session is not None else None
        if target is None or session is None:
            return
        handler = _HANDLERS.get(method)
        if handler is not None:
            handler(self, target, session, params)

    def _attached(self, params: dict[str, Any], parent: str | None) -> None:
        info, session = params.get("targetInfo") or {}, params.get("sessionId")
        if not isinstance(session, str):
            return
        root = str(info.get("targetId"))  # the session's root frame: its id is the target's
        if info.get("type") == "page" and parent is None:
            target = Target(str(info.get("targetId")), session)
            self._targets[target.id] = target
            if (tab_id := self._bound.get(target.id)) is not None:
                target.tab_id, self._tabs[tab_id] = tab_id, target
        elif info.get("type") == "iframe" and parent in self._sessions:
            target = self._sessions[parent]
            target.roots[root] = session
            moved = target.frames.get(root)
            if moved is not None and moved.session != session:  # known as it was in its parent's process
                self._swapped(target, moved)
                moved.session = session
        else:
            self._pipe.send("Runtime.runIfWaitingForDebugger", session=session)
            return
        target.sessions.add(session)
        self._sessions[session] = target
        auto = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True, "filter": [{"type": "iframe"}]}
        self._pipe.send("Target.setAutoAttach", auto, session)
        self._pipe.send("Page.enable", None, session)
        self._pipe.send("Page.getFrameTree", None, session, lambda tree, _: self._tree(target, session, tree))
        self._pipe.send("WebMCP.enable", None, session, lambda _, error: self._enabled(target, session, root, error))
        self._pipe.send("Runtime.runIfWaitingForDebugger", None, session)

    def _enabled(self, target: Target, session: str, root: str, error: CommandError | None) -> None:
        """``WebMCP.enable`` reported what the session's root frame registered before it: what its other frames
        registered by then is read from each of them."""
        if error is None and self._sessions.get(session) is target:
            self._list_frames(target, [f for f in target.frames.values() if f.session == session and f.id != root])

    def _list_frames(self, target: Target, frames: list[Frame]) -> None:
        for frame in frames:
            if frame.document is not None and frame.listing is None:
                frame.listing, target.listing = set(), target.listing + 1
                spawn(self._list(target, frame))

    async def _list(self, target: Target, frame: Frame) -> None:
        """Add the tools the frame lists (``getTools()``) that the browser did not report."""
        document = frame.document
        try:
            listed = await asyncio.wait_for(self._in_world(frame, LISTING), LIST_WAIT)
            if isinstance(listed, list) and frame.document == document and target.frames.get(frame.id) is frame:
                self._listed(target, frame, listed)
        except (CommandError, asyncio.TimeoutError) as exc:  # the frame went, or is too busy to answer
            log.debug("no listing from frame %s: %s", frame.id, exc)
        finally:
            frame.listing = None
            target.listing -= 1
            self._changed(target)

    def _listed(self, target: Target, frame: Frame, listed: list[Any]) -> None:
        """The frame's listing: what it has that the browser did not report joins as if reported all at once (in
        an order the extension tells), with its titles."""
        skip = {*frame.tools, *frame.left_out, *(frame.listing or ())}  # reported meanwhile, or removed since
        tools = [t for t in (listed_tool(raw, frame.id) for raw in listed) if t is not None and t["name"] not in skip]
        self._added(target, frame.session, {"tools": tools})
        untitled = target.untitled.get(frame.id, {})
        held = {t["name"]: untitled[t["name"]] for t in tools if t["name"] in untitled}
        self._titled(target, frame.id, held, {t["name"]: t["title"] for t in tools if t["title"]}, True)

    def _detached(self, session: str) -> None:
        target = self._sessions.pop(session, None)
        if target is None:
            return
        target.sessions.discard(session)
        if session == target.session:  # the tab closed (or its page was replaced): everything goes
            for other in target.sessions:
                self._sessions.pop(other, None)
            gone = list(target.frames.values())
            self._targets.pop(target.id, None)
            if target.tab_id is not None and self._tabs.get(target.tab_id) is target:
                del self._tabs[target.tab_id]  # (its calls go the extension's way until the tab's new target is known)
        else:
            gone = [f for f in target.frames.values() if f.session == session]
            target.roots = {fid: s for fid, s in target.roots.items() if s != session}
        ids: set[str] = set()
        for frame in gone:
            ids |= self._remove(target, frame)
        self._on_gone(ids)
        self._changed(target)

    def _tree(self, target: Target, session: str, tree: dict[str, Any] | None) -> None:
        """The frames a session had when it was attached (``Page.enable`` tells only what happens next)."""

        def walk(node: Any) -> None:
            info = node.get("frame") if isinstance(node, dict) else None
            if (
                not isinstance(info, dict)
                or not isinstance(info.get("id"), str)
                or not target.speaks(session, info["id"])
            ):
                return
            frame = target.frame(info["id"], session)
            if frame.document is None:
                self._describe(frame, info)
                self._relabel(target, frame, frame.tools)
            for child in node.get("childFrames") or ():
                walk(child)

        if tree is not None:
            walk(tree.get("frameTree"))
        self._changed(target)

    def _navigated(self, target: Target, session: str, params: dict[str, Any]) -> None:
        info = params.get("frame")
        if not isinstance(info, dict) or not isinstance(info.get("id"), str):
            return
        if not target.speaks(session, info["id"]):  # a document committed here: the frame came back from its own
            del target.roots[info["id"]]  # process (which ends after), and this session speaks for it again
        frame = target.frame(info["id"], session)
        frame.session = session
        loader = info.get("loaderId")
        if loader == frame.document:
            self._describe(frame, info)
            return
        # A new document: the old one's tools are gone, unless this one came back from the back/forward cache,
        # whose tools arrived just before (they are its own).
        kept = frame.arrived if params.get("type") == "BackForwardCacheRestore" else set()
        gone = {frame.id}
        for name in [n for n in [*frame.tools, *frame.left_out] if n not in kept]:
            self._drop(target, frame, name)
        for below in [f for f in target.frames.values() if f.parent == frame.id]:
            gone |= self._remove(target, below)
        self._describe(frame, info)
        frame.world, frame.untitled = None, set()
        self._relabel(target, frame, [n for n in frame.tools if n in kept])
        self._on_gone(gone)
        self._changed(target)
        if params.get("type") == "BackForwardCacheRestore":  # its iframes came back with it, and said nothing
            target.listing += 1
            self._pipe.send("Page.getFrameTree", None, session, lambda tree, _: self._restored(target, frame, tree))

    def _restored(self, target: Target, frame: Frame, tree: dict[str, Any] | None) -> None:
        """A document back from the back/forward cache announced its own tools, not its iframes': those of the
        iframes in its process are read from them."""
        target.listing -= 1
        self._tree(target, frame.session, tree)
        if target.frames.get(frame.id) is frame:
            self._list_frames(target, [f for f in _below(target, frame.id) if f.session == frame.session])

    def _describe(self, frame: Frame, info: dict[str, Any]) -> None:
        frame.document = info.get("loaderId") if isinstance(info.get("loaderId"), str) else frame.document
        frame.url = str(info.get("url") or "") + str(info.get("urlFragment") or "")
        origin = info.get("securityOrigin")
        frame.origin = origin if isinstance(origin, str) and origin else None
        parent = info.get("parentId")
        frame.parent = parent if isinstance(parent, str) else None

    def _relabel(self, target: Target, frame: Frame, names: Any) -> None:
        """``names``' tools now belong to the frame's document as it is known now."""
        where = {"documentId": frame.document, "frameUrl": frame.url, "origin": frame.origin}
        for name in list(names):
            frame.tools[name] = {**frame.tools[name], **where}
            target.dirty[(frame.number, name)] = None

    def _started(self, target: Target, session: str, params: dict[str, Any]) -> None:
        frame = target.frames.get(str(params.get("frameId")))
        if frame is not None and target.speaks(session, frame.id):
            frame.arrived = set()

    def _frame_detached(self, target: Target, session: str, params: dict[str, Any]) -> None:
        frame = target.frames.get(str(params.get("frameId")))
        if frame is None:
            return
        if params.get("reason") != "swap":
            self._on_gone(self._remove(target, frame))
            self._changed(target)
        elif frame.session == session:  # (not told already by the session it moved to)
            self._swapped(target, frame)

    def _swapped(self, target: Target, frame: Frame) -> None:
        """The frame moved to another process: its document went with it (the new one is told by its session)."""
        for name in [*frame.tools, *frame.left_out]:
            self._drop(target, frame, name)
        frame.document = frame.world = None
        self._on_gone({frame.id})
        self._changed(target)

    def _crashed(self, target: Target, session: str, params: dict[str, Any]) -> None:
        for frame in [f for f in target.frames.values() if f.session == session]:
            for name in [*frame.tools, *frame.left_out]:
                self._drop(target, frame, name)
            frame.document = frame.world = None
            self._on_gone({frame.id})
        self._changed(target)

    def _added(self, target: Target, session: str, params: dict[str, Any]) -> None:
        tools = [
            t
            for t in params.get("tools") or ()
            if isinstance(t, dict) and isinstance(t.get("frameId"), str) and target.speaks(session, t["frameId"])
        ]
        together = Counter(raw["frameId"] for raw in tools)  # more than one in a frame: sorted by name, not registered
        for raw in tools:
            frame = target.frame(raw["frameId"], session)
            made = wire_tool(raw, frame)
            if made is None:
                continue
            tool, size = made
            name = tool["name"]
            frame.changes += 1
            frame.arrived.add(name)
            if frame.put(name, tool, size):
                if together[frame.id] > 1:
                    frame.unordered.add(name)
                hold = frame.chars <= HOLD_CHARS and name not in frame.untitled
                target.untitled.setdefault(frame.id, {})[name] = (frame.changes, hold)
                target.added = asyncio.get_running_loop().time()
            else:
                target.untitled.get(frame.id, {}).pop(name, None)
            target.dirty[(frame.number, name)] = None
        self._changed(target)

    def _removed(self, target: Target, session: str, params: dict[str, Any]) -> None:
        for raw in params.get("tools") or ():
            frame = target.frames.get(str(raw.get("frameId"))) if isinstance(raw, dict) else None
            if frame is not None and target.speaks(session, frame.id) and isinstance(raw.get("name"), str):
                frame.changes += 1
                if frame.listing is not None:
                    frame.listing.add(raw["name"])
                self._drop(target, frame, raw["name"])
        self._changed(target)

    def _drop(self, target: Target, frame: Frame, name: str) -> None:
        frame.drop(name)
        untitled = target.untitled.get(frame.id)
        if untitled is not None:
            untitled.pop(name, None)
            if not untitled:
                del target.untitled[frame.id]
        target.dirty[(frame.number, name)] = None

    def _remove(self, target: Target, frame: Frame) -> set[str]:
        """The frame is gone (removed, or its parent's document went), with its iframes and their tools; the ids
        of the frames that went."""
        gone = {frame.id}
        for child in [f for f in target.frames.values() if f.parent == frame.id]:
            gone |= self._remove(target, child)
        for name in frame.clear():
            target.dirty[(frame.number, name)] = None
        target.untitled.pop(frame.id, None)
        target.frames.pop(frame.id, None)
        target.numbers.pop(frame.number, None)
        return gone

    # ----- telling the relay -----

    def _changed(self, target: Target) -> None:
        """Tell the relay soon: at the end of this turn of the loop, or, while the page keeps changing its tools (a
        page registering thousands), at most every :data:`EMIT_EVERY` seconds (each change costs the relay and every
        client a pass over the tab's list)."""
        if not target.soon:
            target.soon = True
            loop = asyncio.get_running_loop()
            wait = target.flushed + EMIT_EVERY - loop.time()
            if wait > 0:
                loop.call_later(wait, self.flush, target)
            else:
                loop.call_soon(self.flush, target)

    def flush(self, target: Target) -> None:
        """Tell the relay what changed in the target's tools since it was last told (what waits for titles stays
        back), then run what waited for it."""
        target.soon = False
        if target.tab_id is None:
            return
        target.flushed = asyncio.get_running_loop().time()
        if target.untitled and not target.reading:
            target.reading = True
            spawn(self._read_titles(target))
        if not target.ordering and any(frame.unordered for frame in target.frames.values()):
            target.ordering = True
            spawn(self._read_order(target))
        removed: list[ToolKey] = []
        upserted: list[dict[str, Any]] = []
        omitted = self._collect(target, removed, upserted)
        if removed or upserted or omitted != target.omitted:
            target.omitted = omitted
            self._emit(target.tab_id, removed, upserted, omitted)
        if target.shown and target.waiting:
            waiting, target.waiting = target.waiting, []
            for callback in waiting:
                callback()

    def _collect(self, target: Target, removed: list[ToolKey], upserted: list[dict[str, Any]]) -> int:
        """Move what is ready of the target's changes into ``removed`` and ``upserted``; how many it leaves out."""
        waiting: set[int] = set()  # frames with a change not ready: their later changes wait too, to keep the order
        for key in list(target.dirty):
            frame = target.numbers.get(key[0])
            if key[0] in waiting or (
                frame is not None
                and (frame.document is None or key[1] in frame.unordered or target.held(frame, key[1]))
            ):
                waiting.add(key[0])
                continue  # not ready: its document, its place or its title is not known yet
            del target.dirty[key]
            tool = frame.tools.get(key[1]) if frame is not None else None
            if tool is None:
                if target.emitted.pop(key, None) is not None:
                    removed.append(key)
            elif target.emitted.get(key) is not tool:
                target.emitted[key] = tool
                upserted.append(tool)
        return sum(frame.omitted for frame in target.frames.values() if frame.document is not None)

    def when_shown(self, target: Target, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the relay has been told every change the target reported so far."""
        if not target.shown:
            self.flush(target)
        if target.shown or target.tab_id is None:
            callback()
        else:
            target.waiting.append(callback)

    async def settled(self, tab_id: int) -> None:
        """Once every session of the tab has answered a command (so every event it sent before is in) and the
        relay has been told what they said; at most :data:`SETTLE_WAIT`."""
        target = self._tabs.get(tab_id)
        if target is None:
            return
        shown: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done() -> None:
            if not shown.done():
                shown.set_result(None)

        async def settle() -> None:
            answers = [self._pipe.call("Page.getFrameTree", None, s) for s in list(target.sessions)]
            await asyncio.gather(*answers, return_exceptions=True)
            self.when_shown(target, done)
            await shown

        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(settle(), SETTLE_WAIT)

    async def _read_order(self, target: Target) -> None:
        """Put the tools the browser reported all at once in the order the extension says their frames registered
        them; then tell the relay (tools it did not name, or all of them if it did not answer, keep the browser's
        order, after)."""
        asked = {fid: set(frame.unordered) for fid, frame in target.frames.items() if frame.unordered}
        answer: list[Any] = []
        try:
            if target.tab_id is not None:
                answer = await asyncio.wait_for(self._ask(target.tab_id), ORDER_WAIT)
        except Exception as exc:  # (a timeout, a browser gone): the browser's order, rather than none
            log.debug("no order for tab %s: %s", target.tab_id, exc)
        finally:
            target.ordering = False
        places = _places(target, answer)
        for fid, names in asked.items():
            frame = target.frames.get(fid)
            if frame is not None:
                _reorder(target, frame, names & frame.unordered, places.get(fid, {}))
        self.flush(target)

    async def _read_titles(self, target: Target) -> None:
        """Read the titles of the tools held back, frame by frame, until none is; then tell the relay."""
        loop = asyncio.get_running_loop()
        try:
            while target.untitled and target.tab_id is not None:
                if not target.holding and (wait := target.added + QUIET - loop.time()) > 0:
                    await asyncio.sleep(wait)  # only a large frame's are waiting: read once it is quiet
                    continue
                wanted = {fid: dict(names) for fid, names in target.untitled.items()}
                titles: dict[str, dict[str, str]] = {}
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._titles(target, wanted, titles), TITLE_WAIT)
                for fid, names in wanted.items():
                    self._titled(target, fid, names, titles.get(fid, {}), fid in titles)
                self.flush(target)
        finally:
            target.reading = False
        if target.untitled:
            self._changed(target)

    def _titled(
        self, target: Target, fid: str, names: dict[str, tuple[int, bool]], titles: dict[str, str], read: bool
    ) -> None:
        """Put the titles read (``read``: the frame answered) in the frame's tools (a tool already shown is replaced,
        so the relay hears of it). A frame that did not answer shows what it held without titles, and is asked once
        more."""
        frame, untitled = target.frames.get(fid), target.untitled.get(fid)
        if frame is None or untitled is None:
            return
        for name, entry in names.items():
            if untitled.get(name) != entry:
                continue  # registered again meanwhile: read again
            if not read and entry[1]:
                untitled[name] = (entry[0], False)
                continue
            del untitled[name]
            title, tool = titles.get(name), frame.tools.get(name)
            if tool is not None and read:
                (frame.untitled.discard if title else frame.untitled.add)(name)
            if not title or tool is None:
                continue
            if entry[1] and (frame.number, name) not in target.emitted:  # held back: not shown yet
                tool["title"] = title
            else:
                frame.tools[name] = {**tool, "title": title}
                target.dirty[(frame.number, name)] = None
        if not untitled:
            del target.untitled[fid]

    async def _titles(self, target: Target, wanted: dict[str, Any], into: dict[str, dict[str, str]]) -> None:
        for fid in wanted:
            frame = target.frames.get(fid)
            if frame is None or frame.document is None:
                continue
            try:
                into[fid] = await self._titles_of(frame)
            except CommandError as exc:  # the frame went, or its world with its document
                log.debug("no titles from frame %s: %s", fid, exc)

    async def _titles_of(self, frame: Frame) -> dict[str, str]:
        value = await self._in_world(frame, TITLES)
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    async def _in_world(self, frame: Frame, expression: str) -> Any:
        """What ``expression`` comes to in the frame's isolated world (``None`` if its document went meanwhile)."""
        document = frame.document
        if frame.world is None:
            made = await self._pipe.call(
                "Page.createIsolatedWorld", {"frameId": frame.id, "worldName": WORLD}, frame.session
            )
            if frame.document == document:
                frame.world = made.get("executionContextId")
        if frame.world is None:
            return None
        reply = await self._pipe.call(
            "Runtime.evaluate",
            {
                "contextId": frame.world,
                "expression": expression,
                "awaitPromise": True,
                "returnByValue": True,
                "silent": True,
            },
            frame.session,
        )
        return (reply.get("result") or {}).get("value") if frame.document == document else None


def _below(target: Target, frame_id: str) -> list[Frame]:
    """The frames under ``frame_id``, at any depth."""
    found = [f for f in target.frames.values() if f.parent == frame_id]
    return found + [f for child in found for f in _below(target, child.id)]


def _places(target: Target, answer: list[Any]) -> dict[str, dict[str, int]]:
    """Each of the target's frames the extension's answer names, as name → place: the top frame's by its top frame,
    another's by the one frame of the same address (fragment aside) when each side has exactly one; the addresses
    must agree, so an answer about another document is never taken."""
    reported: dict[tuple[bool, str], list[list[str]]] = {}
    for entry in answer if isinstance(answer, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("names"), list):
            where = (entry.get("frameId") == 0, _address(entry.get("url")))
            reported.setdefault(where, []).append([n for n in entry["names"][:MAX_TOOLS] if isinstance(n, str)])
    ours = Counter((frame.number == 0, _address(frame.url)) for frame in target.frames.values())
    places = {}
    for frame in target.frames.values():
        where = (frame.number == 0, _address(frame.url))
        if len(found := reported.get(where, [])) == 1 and ours[where] == 1:
            places[frame.id] = {name: i for i, name in enumerate(found[0])}
    return places


def _address(url: Any) -> str:
    return str(url or "").split("#", 1)[0]


def _reorder(target: Target, frame: Frame, names: set[str], places: dict[str, int]) -> None:
    """Give ``names`` (not shown yet) their places among the frame's tools and in what the relay is told next."""
    if not names:
        return
    frame.unordered -= names
    now = [name for name in frame.tools if name in names]
    wanted = sorted(now, key=lambda name: places.get(name, len(places)))  # (stable: the rest as the browser had them)
    if wanted == now:
        return
    moved = iter(wanted)
    frame.tools = {name: frame.tools[name] for name in (next(moved) if n in names else n for n in frame.tools)}
    keys = iter([(frame.number, name) for name in wanted if (frame.number, name) in target.dirty])
    target.dirty = {(next(keys) if k[0] == frame.number and k[1] in names else k): None for k in target.dirty}


_HANDLERS: dict[str, Callable[[Pages, Target, str, dict[str, Any]], None]] = {
    "Page.frameNavigated": Pages._navigated,
    "Page.frameStartedNavigating": Pages._started,
    "Page.frameDetached": Pages._frame_detached,
    "Inspector.targetCrashed": Pages._crashed,
    "WebMCP.toolsAdded": Pages._added,
    "WebMCP.toolsRemoved": Pages._removed,
}
