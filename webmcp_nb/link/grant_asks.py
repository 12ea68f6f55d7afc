"""The relay's side of per-site grants (:mod:`webmcp_nb.link.grants`): it decides every ``grants.check`` from the
grant file as it is at that moment, asks the user when a site was never granted, takes the first answer from any
view, writes what the answer says, and tells every client and browser what changed.

An ask is an event (``grant.asked``) that the side panel and the notebook panel show as a card naming the site, who
asks and what; the caller's request waits until an answer (``grants.answer``: ``once``, ``read``, ``act`` or
``never``), its time limit, or the caller giving up. Every ask, answer and refusal is an event (``grant.*``), sent
to the clients (each notebook's stream and session) and to the browser (its side panels' log). A relay that does
not enforce grants (``launch()``'s, unless asked to) answers every check at once, and still lists the grants.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.errors import ErrorCode
from .grants import ANSWERS, NEEDS, GrantError, GrantFileError, GrantStore, Snapshot, origin_of, satisfies

__all__ = ["GrantAsks", "AskRefused", "ASK_TIMEOUT", "MAX_ASK_TIMEOUT", "POLL_EVERY"]

ASK_TIMEOUT = 60.0
"""Seconds an ask waits for the user by default."""
MAX_ASK_TIMEOUT = 600.0
POLL_EVERY = 1.0
"""Seconds between looks at the grant file for changes made elsewhere (``webmcp-nb grants``, ``wm.grants``)."""
MAX_WAITING = 3
"""Asks one client may have waiting for the user at once: past them it is refused at once, so a hostile MCP client
cannot bury the side panel in cards (an agent or a person asks one at a time)."""
MAX_NAME = 200
RISKS = ("low", "medium", "high")
BY = {"sidepanel": "side panel", "panel": "notebook panel", "notebook": "notebook"}
"""Who answered or revoked, as the grant file records it."""

Reply = Callable[[dict[str, Any] | None, tuple[ErrorCode, str] | None], None]
"""How a check is answered: ``(result, None)`` or ``(None, (code, message))``."""


class AskRefused(Exception):
    """A grants request the relay refuses, with the error code to answer."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@dataclass
class _Ask:
    """A check waiting for the user."""

    id: str
    browser_id: str | None
    tab_id: int | None
    site: str
    need: str
    what: dict[str, Any]
    requester: object
    request_id: Any
    reply: Reply
    timeout: float
    timer: asyncio.TimerHandle | None = None
    granted: str = "ask"
    """The site's level when it was asked (``read``: the ask was for ``act``)."""


def _text(value: Any, limit: int = MAX_NAME) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


class GrantAsks:
    """Checks, asks and answers for one relay. ``emit(browser_id, event)`` sends a ``grant.*`` event (to every
    browser when ``browser_id`` is None); ``push(state)`` sends the grants as they are now."""

    def __init__(
        self,
        store: GrantStore,
        *,
        enforce: bool,
        emit: Callable[[str | None, dict[str, Any]], None],
        push: Callable[[dict[str, Any]], None],
    ) -> None:
        self.store = store
        self.enforce = enforce
        self._emit = emit
        self._push = push
        self._asks: dict[str, _Ask] = {}
        self._told: Snapshot | None = None

    # ----- state -----

    def state(self) -> dict[str, Any]:
        """What ``grants.list`` answers and ``grants.updated`` carries."""
        snapshot = self.store.snapshot()
        return {
            "enforced": self.enforce,
            "grants": [g.as_dict() for g in sorted(snapshot.grants.values(), key=lambda g: g.origin)],
            "problem": snapshot.problem,
            "path": str(self.store.path),
            "asks": [self._asked_data(a) for a in self._asks.values()],
        }

    def refresh(self) -> Snapshot:
        """Read the file; if it changed since clients and browsers were last told, tell them (and say which sites
        changed, as ``grant.changed`` events)."""
        snapshot = self.store.snapshot()
        told, self._told = self._told, snapshot
        if told is None or (told.grants, told.problem) == (snapshot.grants, snapshot.problem):
            return snapshot
        self._push(self.state())  # first: whoever hears of a change finds the new state already there
        for site in sorted(set(told.grants) | set(snapshot.grants)):
            before, after = told.grants.get(site), snapshot.grants.get(site)
            if before != after:
                level = after.level if after is not None else "ask"
                by = after.by if after is not None else ""
                self._emit(None, _event("grant.changed", None, site, level=level, by=by))
        return snapshot

    # ----- checks -----

    def check(
        self,
        params: dict[str, Any],
        *,
        browser_id: str | None,
        url_of_tab: Callable[[str | None, Any], str | None],
        requester: object,
        request_id: Any,
        reply: Reply,
    ) -> None:
        """``grants.check``: may ``who`` do what ``need`` needs on the site of ``url`` (or of tab ``tabId``)? Answered
        at once, or once the user has answered the ask it makes."""
        need = params.get("need")
        who: dict[str, Any] = params["who"] if isinstance(params.get("who"), dict) else {}
        what = {
            "who": _text(who.get("name")) or "an unnamed client",
            "origin": _text(who.get("kind"), 40) or "client",
            "action": _text(params.get("action"), 40) or "act",
            "tool": _text(params.get("tool")),
            "risk": params.get("risk") if params.get("risk") in RISKS else None,
        }
        timeout = params.get("timeoutMs", ASK_TIMEOUT * 1000)
        numeric = isinstance(timeout, int | float) and not isinstance(timeout, bool) and math.isfinite(timeout)
        if need not in NEEDS or not numeric:
            reply(None, (ErrorCode.BAD_REQUEST, "grants.check needs need ('read' or 'act') and a numeric timeoutMs"))
            return
        if not self.enforce:
            reply({"allowed": True, "level": "exempt"}, None)
            return
        tab_id = params.get("tabId")
        url = params.get("url") if isinstance(params.get("url"), str) else url_of_tab(browser_id, tab_id)
        site = origin_of(url or "")
        if site is None:
            shown = (url or "this page")[:100]
            self._refuse_now(browser_id, tab_id, shown, need, what, "not a site", reply)
            return
        # A `once` the caller holds counts only for the site it was given for: the tab may have moved since.
        held = params.get("held") if params.get("held") in NEEDS and params.get("heldSite") == site else None
        level = self.refresh().grants.get(site)
        stored = level.level if level is not None else "ask"
        if stored == "none":
            self._refuse_now(browser_id, tab_id, site, need, what, "never", reply)
            return
        if satisfies(stored, need) or (held is not None and satisfies(held, need)):
            reply({"allowed": True, "level": stored, "site": site}, None)
            return
        if sum(waiting.requester is requester for waiting in self._asks.values()) >= MAX_WAITING:
            self._refuse_now(browser_id, tab_id, site, need, what, "too many asks", reply)
            return
        ask = _Ask(secrets.token_hex(6), browser_id, tab_id, site, need, what, requester, request_id, reply, 0.0)
        ask.timeout, ask.granted = min(max(float(timeout) / 1000, 0.1), MAX_ASK_TIMEOUT), stored
        self._asks[ask.id] = ask
        ask.timer = asyncio.get_running_loop().call_later(ask.timeout, self._expire, ask.id)
        self._emit(browser_id, _event("grant.asked", tab_id, site, **self._asked_data(ask)))

    def _asked_data(self, ask: _Ask) -> dict[str, Any]:
        data = {"id": ask.id, "site": ask.site, "need": ask.need, "timeout_s": ask.timeout, **ask.what}
        return {k: v for k, v in data.items() if v is not None}

    def _refuse_now(
        self, browser_id: str | None, tab_id: Any, site: str, need: str, what: dict[str, Any], why: str, reply: Reply
    ) -> None:
        data = {k: v for k, v in what.items() if v is not None}
        self._emit(browser_id, _event("grant.refused", tab_id, site, need=need, why=why, **data))
        reply(None, (ErrorCode.PERMISSION_DENIED, _refusal(site, need, what, why)))

    # ----- answers -----

    def answer(self, params: dict[str, Any], *, by: str) -> dict[str, Any]:
        """``grants.answer`` from a view: the first answer to an ask wins; a later one is refused."""
        ask_id, answer = params.get("id"), params.get("answer")
        if answer not in ANSWERS:
            raise AskRefused(ErrorCode.BAD_REQUEST, f"answer must be one of {', '.join(ANSWERS)}")
        ask = self._asks.pop(ask_id, None) if isinstance(ask_id, str) else None
        if ask is None:
            raise AskRefused(
                ErrorCode.BAD_REQUEST, f"no ask {str(ask_id)[:40]!r} is waiting: it was answered, expired or withdrawn"
            )
        if ask.timer is not None:
            ask.timer.cancel()
        error = None
        if answer != "once":
            try:
                self.store.allow(ask.site, "none" if answer == "never" else answer, by=BY.get(by, by))
            except (GrantFileError, GrantError) as exc:
                error = f"not saved: {exc}"
        allowed = answer == "once" or (answer in NEEDS and satisfies(answer, ask.need))
        self._answered(ask, answer, by, allowed, error)
        if answer != "once":
            self.refresh()
            for other in [a for a in self._asks.values() if a.site == ask.site]:
                if answer == "never" or satisfies(answer, other.need):
                    del self._asks[other.id]
                    if other.timer is not None:
                        other.timer.cancel()
                    self._answered(other, answer, by, answer != "never", error)
        return {"answered": ask.id, "allowed": allowed}

    def _answered(self, ask: _Ask, answer: str, by: str, allowed: bool, error: str | None) -> None:
        data: dict[str, Any] = {"id": ask.id, "site": ask.site, "need": ask.need, "answer": answer}
        data |= {"allowed": allowed, "origin": by, **({"error": error} if error else {})}
        data |= {k: v for k, v in ask.what.items() if k in ("who", "action", "tool") and v is not None}
        self._emit(ask.browser_id, _event("grant.answered", ask.tab_id, ask.site, **data))
        if allowed:
            level = "ask" if answer == "once" else answer
            ask.reply({"allowed": True, "level": level, "answer": answer, "site": ask.site}, None)
        else:
            why = "never" if answer == "never" else "read only"
            ask.reply(None, (ErrorCode.PERMISSION_DENIED, _refusal(ask.site, ask.need, ask.what, why)))

    def revoke(self, params: dict[str, Any], *, by: str) -> dict[str, Any]:
        """``grants.revoke`` from a view: the site asks again from its next check."""
        try:
            revoked = self.store.revoke(str(params.get("origin", "")))
        except (GrantFileError, GrantError) as exc:
            raise AskRefused(ErrorCode.BAD_REQUEST, str(exc)) from None
        self.refresh()
        return {"revoked": revoked}

    # ----- asks that end without an answer -----

    def _expire(self, ask_id: str) -> None:
        ask = self._asks.pop(ask_id, None)
        if ask is not None:
            self._end(ask, "timeout")
            ask.reply(None, (ErrorCode.PERMISSION_DENIED, _refusal(ask.site, ask.need, ask.what, "timeout", ask)))

    def withdraw(self, requester: object, request_id: Any = None) -> None:
        """The caller gave up (cancelled its request, or left): its asks end, unanswered."""
        for ask in [a for a in self._asks.values() if a.requester is requester]:
            if request_id is None or ask.request_id == request_id:
                del self._asks[ask.id]
                if ask.timer is not None:
                    ask.timer.cancel()
                self._end(ask, "withdrawn")

    def _end(self, ask: _Ask, why: str) -> None:
        data = {"id": ask.id, "need": ask.need, "why": why, **{k: v for k, v in ask.what.items() if v is not None}}
        self._emit(ask.browser_id, _event("grant.refused", ask.tab_id, ask.site, **data))


def _event(kind: str, tab_id: Any, where: str, **data: Any) -> dict[str, Any]:
    """A ``grant.*`` event as views and sessions take it (``url`` and ``data.site``: the site)."""
    tab = tab_id if isinstance(tab_id, int) and not isinstance(tab_id, bool) else None
    return {
        "kind": kind,
        "tab_id": tab,
        "url": where,
        "ts": time.time(),
        "duration_ms": None,
        "data": {"site": where, **data},
    }


def _refusal(site: str, need: str, what: dict[str, Any], why: str, ask: _Ask | None = None) -> str:
    """The "not granted" message a caller shows its user: what was refused, why, and how the user can change it."""
    doing = f"{what['action']} {what['tool']}" if what.get("tool") else what["action"]
    # The panels' Sites lists only revoke (the next request asks again); the command sets a level outright.
    change = (
        f"`webmcp-nb grants allow {site} read|act`, or by revoking it in the Sites list of the side panel or the "
        "notebook panel (the next request asks again)"
    )
    if why == "never":
        return f"{site} is not granted ({doing}): the user chose never for this site. They can change it with {change}."
    if why == "read only":
        return (
            f"{site} is granted for reading only, and {doing} needs act. The user can let it act on this site with "
            f"{change.replace('read|act', 'act')}."
        )
    if why == "timeout":
        seconds = f"{ask.timeout:g} s" if ask is not None else "time"
        if ask is not None and ask.granted == "read":
            return (
                f"{site} is granted for reading only, and {doing} needs act: nobody answered the ask within "
                f"{seconds}. The user can answer it in the side panel or the notebook panel next time, or let it act "
                f"on this site with {change.replace('read|act', 'act')}."
            )
        return (
            f"{site} is not granted ({doing}): nobody answered the ask within {seconds}. The user can answer it in "
            f"the side panel or the notebook panel next time, or grant the site with {change}."
        )
    if why == "too many asks":
        return (
            f"{site} is not granted ({doing}), and this client already has {MAX_WAITING} questions waiting for the "
            f"user: not asked again until one is answered. The user can grant the site with {change}."
        )
    return f"{site} is not a site that can be granted ({doing}): only http, https and file pages can be."
