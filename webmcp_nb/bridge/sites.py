"""Chat-site adapters: how the bridge finds a web chat's input, send button, assistant messages and busy state.

Site support is data, not code: one JSON object per site (``chat_sites/*.json`` in the package, or a ``dict`` or
a file of the user's), ``{"name", "input", "send", "assistant", "busy", "input_type"}`` with any extra keys kept
(``about``, ``urls``, ``verified``). A selector is a CSS selector or a list of them, tried in order on the live
page (the first that matches is used): that is how the ``generic`` adapter finds a site heuristically.
``assistant`` must match only the assistant's own message bodies: markup anywhere else on the page is never read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.display import clip, table, visible
from ..core.errors import ConfigurationError

__all__ = ["Site", "SiteCheck", "load_site", "site_names", "SITES", "SELECTOR_KEYS"]

SITES = Path(__file__).parent / "chat_sites"
"""The adapters that ship with the package, one JSON file each."""
SELECTOR_KEYS = ("input", "send", "assistant", "busy")
INPUT_TYPES = ("textarea", "contenteditable", "auto")
MAX_SELECTOR_CHARS = 2_000
MAX_CANDIDATES = 32


@dataclass(frozen=True)
class Site:
    """One chat site's adapter: its selectors (each a list of candidates) and the kind of its input."""

    name: str
    selectors: dict[str, list[str]]
    input_type: str = "auto"
    extra: dict[str, Any] = field(default_factory=dict)
    """The adapter's other keys, as given (``about``, ``urls``, ``verified``…)."""

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "site") -> Site:
        """An adapter from its JSON object; ``ConfigurationError`` naming the field that does not fit."""
        if not isinstance(raw, Mapping):
            raise ConfigurationError(f"{where} must be a JSON object (a dict), not {type(raw).__name__}")
        name = raw.get("name")
        if not isinstance(name, str) or not 0 < len(name) <= 64:
            raise ConfigurationError(f"{where}['name'] must be a short string naming the site")
        selectors = {}
        for key in SELECTOR_KEYS:
            value = raw.get(key)
            candidates = [value] if isinstance(value, str) else value
            if (
                not isinstance(candidates, list)
                or not 0 < len(candidates) <= MAX_CANDIDATES
                or not all(isinstance(c, str) and 0 < len(c.strip()) <= MAX_SELECTOR_CHARS for c in candidates)
            ):
                raise ConfigurationError(
                    f"{where}[{key!r}] must be a CSS selector or a list of at most {MAX_CANDIDATES} of them "
                    f"(got {clip(json.dumps(value, default=str), 200)})"
                )
            selectors[key] = [c.strip() for c in candidates]
        input_type = raw.get("input_type", "auto")
        if input_type not in INPUT_TYPES:
            raise ConfigurationError(f"{where}['input_type'] must be one of {', '.join(INPUT_TYPES)}")
        extra = {k: v for k, v in raw.items() if k not in (*SELECTOR_KEYS, "name", "input_type")}
        try:
            json.dumps(extra)
        except (TypeError, ValueError):
            raise ConfigurationError(f"{where}: its other keys must be JSON data") from None
        return cls(name, selectors, str(input_type), extra)

    def as_dict(self) -> dict[str, Any]:
        """The adapter as the page side reads it (and as its JSON file is written)."""
        return {"name": self.name, **self.selectors, "input_type": self.input_type, **self.extra}

    @property
    def verified(self) -> bool:
        """Whether the adapter was checked against the live site (the shipped real-site ones were not)."""
        return self.extra.get("verified") is True


def site_names() -> list[str]:
    """The adapters that ship with the package."""
    return sorted(path.stem for path in SITES.glob("*.json"))


def load_site(site: str | Path | Mapping[str, Any] | Site) -> Site:
    """An adapter by name (``"generic"``, ``"chatgpt"``…), from a JSON file, or from a dict."""
    if isinstance(site, Site):
        return site
    if isinstance(site, Mapping):
        return Site.from_dict(site)
    path = Path(site)
    if isinstance(site, str) and site in site_names():
        path = SITES / f"{site}.json"
    elif path.suffix != ".json" or not path.is_file():
        raise ConfigurationError(
            f"no chat site {str(site)!r}: give one of {', '.join(site_names())}, a .json file or a dict"
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"could not read the chat site {path}: {exc}") from None
    return Site.from_dict(raw, where=path.name)


@dataclass(frozen=True)
class SiteCheck:
    """What ``bridge.check()`` found on the live page: for each selector, which candidate matched and how many
    elements. ``failures`` names each key that does not work now, and why."""

    site: str
    found: dict[str, dict[str, Any]]

    @property
    def failures(self) -> dict[str, str]:
        """Key → why it fails: ``input`` and ``send`` must match now; ``assistant`` must match what the page drew
        after the last message was sent; an invalid selector fails anywhere."""
        out = {}
        for key in SELECTOR_KEYS:
            seen = self.found.get(key) or {}
            tried = ", ".join(seen.get("tried") or [])
            if seen.get("invalid"):
                out[key] = f"not a valid CSS selector: {', '.join(seen['invalid'])}"
            elif key in ("input", "send") and not seen.get("found"):
                out[key] = f"nothing on the page matches {tried}"
            elif key == "assistant" and seen.get("missing"):
                out[key] = (
                    f"nothing the page drew after the last message was sent matches {tried}: the bridge cannot "
                    "read the assistant's replies"
                )
        return out

    @property
    def ok(self) -> bool:
        return not self.failures

    def _rows(self) -> list[tuple[str, str, str, str]]:
        rows = []
        for key in SELECTOR_KEYS:
            seen = self.found.get(key) or {}
            count = int(seen.get("found") or 0)
            if key in self.failures:
                state = f"FAILS: {self.failures[key]}"
            elif key == "assistant" and not count:
                state = "no assistant message on the page yet (checked against what the page draws after a send)"
            elif key == "busy":
                state = "the site is answering now" if count else "not answering now"
            else:
                state = "ok"
            rows.append((key, str(seen.get("selector") or ", ".join(seen.get("tried") or [])), str(count), state))
        return rows

    def __repr__(self) -> str:
        head = f"chat site {self.site}: {'every selector works' if self.ok else 'FAILS on ' + ', '.join(self.failures)}"
        return visible(
            "\n".join([head, *(f"  {k:<9} {n:>3} × {clip(s, 80)}  {state}" for k, s, n, state in self._rows())])
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        head = f"Chat site {self.site}: " + (
            "every selector works" if self.ok else f"fails on {', '.join(self.failures)}"
        )
        html = table(["key", "selector", "found", "state"], [list(row) for row in self._rows()], head)
        return {"text/plain": repr(self), "text/html": html}
