"""Sessions: a browser's event stream recorded as it happens, to share, report on and replay.

On disk a session is a folder::

    session.jsonl        line 1: the header (format, version, library/extension/browser versions, model,
                         provider, skills, start URL); then one event per line, appended and flushed as it
                         happens, so a killed kernel loses nothing already done
    NNNN-TOOL-PHASE.png  screenshot evidence, referenced from ``evidence.screenshot`` events; the tool's name
                         is cut down to ``[A-Za-z0-9_.-]`` (``evidence_file``), so no name leaves the folder

Format ``webmcp-nb-session`` version 1: each event line is ``{"seq", "ts", "kind", "tab_id", "url",
"duration_ms", "data"}`` (see :class:`webmcp_nb.core.events.Event`). Secrets the session knows of (API keys, the
pairing secret) are replaced by ``[redacted]`` before anything is written.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field

from .._version import __version__
from ..core.events import Event
from ..link.home import home

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..browser.tab import Tab
    from ..browser.tools import Tool
    from .report import Report

__all__ = ["Session", "SessionHeader", "FORMAT", "FORMAT_VERSION", "Evidence", "EVIDENCE_FILE", "evidence_file"]

FORMAT = "webmcp-nb-session"
FORMAT_VERSION = 1
MAX_RECORDED_TEXT = 1_000_000
REDACTED = "[redacted]"

Evidence = Literal["off", "non-readonly", "all"]

EVIDENCE_FILE = re.compile(r"\d{4,}-[A-Za-z0-9_.-]{1,64}-(?:before|after)\.png")
"""The names of the screenshot files a session writes; the report reads no file of another name."""

NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _blank(url: str) -> bool:
    return url.startswith(("about:", "chrome:", "chrome-extension:", "data:")) or not url.strip()


def evidence_file(shot: int, tool: str, phase: str) -> str:
    """The file name of a screenshot: the tool's name (the page's) cut down to safe characters, so it is one
    plain name inside the session folder whatever the page called its tool."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", tool)[:64] or "tool"
    return f"{shot:04d}-{safe}-{phase}.png"


class SessionHeader(BaseModel):
    """The first line of session.jsonl."""

    model_config = ConfigDict(extra="allow")

    format: str = FORMAT
    version: int = FORMAT_VERSION
    id: str
    created: float
    title: str = ""
    library: str = __version__
    extension: str = ""
    browser: str = ""
    model: str | None = None
    provider: str | None = None
    skills: list[dict[str, str]] = Field(default_factory=list)
    start_url: str | None = None
    evidence: str = "non-readonly"


class Session:
    """A recording. ``Session(browser)`` starts recording everything that browser does until ``close()``;
    ``Session.load(path)`` reads one back. Agents start one by default."""

    def __init__(
        self,
        browser: Browser | None = None,
        *,
        directory: str | Path | None = None,
        evidence: Evidence = "non-readonly",
        title: str = "",
        **header: Any,
    ) -> None:
        session_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        self.directory = Path(directory) if directory else home() / "sessions" / session_id
        self.path = self.directory / "session.jsonl"
        self.evidence = evidence
        self.events: list[Event] = []
        self._secrets: set[str] = set()
        self._shots = 0
        self._browser = browser
        self._file: TextIO | None = None
        self._unsubscribe: Callable[[], None] | None = None
        info = browser.info if browser is not None else None
        if browser is not None and browser.relay is not None:
            self.add_secret(browser.relay.secret)
        active = browser.active_tab if browser is not None else None
        self.header = SessionHeader(
            id=session_id,
            created=time.time(),
            title=title,
            extension=info.extension_version if info else "",
            browser=info.user_agent if info else "",
            skills=[{"name": s.name, "version": s.version} for s in (info.skills if info else [])],
            start_url=active.url if active else None,
            evidence=evidence,
            **header,
        )
        if browser is not None:
            self._start(browser)

    # ----- recording -----

    def _start(self, browser: Browser) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - open for the session's life
        self._write(self.header.model_dump())
        self._unsubscribe = browser.events.subscribe(self._record)
        browser._attach_session(self)

    def add_secret(self, value: str | None) -> None:
        """Never write ``value`` (an API key, a token): it becomes ``[redacted]`` in every line."""
        if value and len(value) >= 6:
            self._secrets.add(value)
            self._secrets.add(json.dumps(value)[1:-1])

    def _write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        line = json.dumps(record, ensure_ascii=False, default=str)
        for secret in self._secrets:
            line = line.replace(secret, REDACTED)
        self._file.write(line + "\n")
        self._file.flush()

    def _record(self, event: Event) -> None:
        if event.kind.startswith("evidence.") and event.data.get("session", self.header.id) != self.header.id:
            return  # another session's screenshot: its file is in that session's folder
        self.events.append(event)
        record = event.model_dump()
        text = record["data"].get("text")
        if isinstance(text, str) and len(text) > MAX_RECORDED_TEXT:
            record["data"] = {**record["data"], "text": text[:MAX_RECORDED_TEXT], "truncated": len(text)}
        self._write(record)

    async def _evidence(self, phase: str, tab: Tab, tool: Tool) -> None:
        """A screenshot before or after a call its policy covers, timed on its own (the call's ``duration_ms``
        is the tool's time alone; Chrome's capture quota makes each screenshot wait up to half a second)."""
        if self.evidence == "off" or (self.evidence == "non-readonly" and tool.read_only) or self._browser is None:
            return
        events, started = self._browser.events, time.perf_counter()
        try:
            png = await tab.ascreenshot()
            name = self._write_evidence(tool.name, phase, png)
        except Exception as exc:  # evidence must never break the call it documents
            took = (time.perf_counter() - started) * 1000
            events.emit(
                "evidence.failed", tab_id=tab.id, duration_ms=took, tool=tool.name, phase=phase, error=str(exc),
                session=self.header.id,
            )  # fmt: skip
            return
        took = (time.perf_counter() - started) * 1000
        events.emit(
            "evidence.screenshot", tab_id=tab.id, url=tab.url, duration_ms=took, tool=tool.name, phase=phase, file=name,
            session=self.header.id,
        )  # fmt: skip

    def _write_evidence(self, tool: str, phase: str, png: bytes) -> str:
        """Write a new file (never over an existing one, never through a link someone left in the folder)."""
        for _ in range(10_000):
            self._shots += 1
            name = evidence_file(self._shots, tool, phase)
            try:
                fd = os.open(self.directory / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NO_FOLLOW, 0o644)
            except FileExistsError:
                continue  # a folder recorded into before: the next number
            with os.fdopen(fd, "wb") as file:
                file.write(png)
            return name
        raise FileExistsError(f"{self.directory}: no free evidence file name")

    def note(self, text: str) -> None:
        """Add a note of yours to the record."""
        if self._browser is not None:
            self._browser.events.emit("note", text=text)

    def append(self, kind: str, **data: Any) -> Event:
        """Add an event of one's own to the session, recording or closed: what someone concluded about it (an
        eval's ``verdict.pass|fail|error``, shown at the top of its report). Secrets it knows of are redacted."""
        if self.recording and self._browser is not None:
            return self._browser.events.emit(kind, **data)  # in order with everything else it records
        event = Event(seq=(self.events[-1].seq if self.events else 0) + 1, ts=time.time(), kind=kind, data=data)
        self.events.append(event)
        line = json.dumps(event.model_dump(), ensure_ascii=False, default=str)
        for secret in self._secrets:
            line = line.replace(secret, REDACTED)
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(line + "\n")
        return event

    def close(self) -> None:
        """Stop recording (the file stays)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._browser is not None:
            self._browser._detach_session(self)
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def recording(self) -> bool:
        return self._file is not None

    # ----- reading -----

    @classmethod
    def load(cls, path: str | Path) -> Session:
        """Read a session folder (or its session.jsonl). A torn last line (a kill mid-write) is skipped."""
        path = Path(path)
        file = path / "session.jsonl" if path.is_dir() else path
        lines = file.read_text(encoding="utf-8").splitlines()
        if not lines:
            raise ValueError(f"{file}: empty, not a webmcp-nb session")
        header = SessionHeader.model_validate_json(lines[0])
        if header.format != FORMAT or header.version > FORMAT_VERSION:
            raise ValueError(f"{file}: format {header.format} v{header.version}; this library reads v{FORMAT_VERSION}")
        session = cls.__new__(cls)
        session.directory, session.path, session.header = file.parent, file, header
        session.evidence, session._secrets, session._browser = header.evidence, set(), None  # type: ignore[assignment]
        session._file = session._unsubscribe = None
        session.events = []
        for number, line in enumerate(lines[1:], start=2):
            try:
                session.events.append(Event.model_validate_json(line))
            except ValueError:
                if number != len(lines):
                    raise ValueError(f"{file}:{number}: not an event line") from None
        return session

    @property
    def first_url(self) -> str | None:
        """The first page the session used: where its first tool call ran, else the first page it opened or
        navigated to, else the start URL unless that was blank. (A session begun before the first
        ``browser.open()`` starts on ``about:blank``; replays start here.)"""
        for kinds in (("tool.called", "tool.refused"), ("navigation",)):
            for event in self.events:
                if event.kind in kinds and event.url and not _blank(event.url):
                    return event.url
        start = self.header.start_url
        return None if start is None or _blank(start) else start

    def __iter__(self) -> Iterator[Event]:
        return iter(list(self.events))

    def __len__(self) -> int:
        return len(self.events)

    def filter(self, kind: str | None = None, *, tool: str | None = None, tab_id: int | None = None) -> list[Event]:
        """Events of ``kind`` (a prefix: ``"tool"`` matches ``tool.called``…), of ``tool``, in ``tab_id``."""
        return [
            e
            for e in self.events
            if (kind is None or e.kind == kind or e.kind.startswith(kind + "."))
            and (tool is None or e.data.get("tool") == tool)
            and (tab_id is None or e.tab_id == tab_id)
        ]

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per event, for ``pandas.DataFrame(session.records())``."""
        rows = []
        for e in self.events:
            row = {k: v for k, v in e.model_dump().items() if k != "data"}
            row.update(
                {
                    f"data.{k}": v if isinstance(v, str | int | float | bool) or v is None else json.dumps(v)
                    for k, v in e.data.items()
                }
            )
            rows.append(row)
        return rows

    def save(self, directory: str | Path) -> Path:
        """Copy the session (JSONL and evidence) into ``directory``; returns it. Only those are copied, as the
        plain files they are: whatever else a shared folder holds (a link to a private file) stays behind."""
        target = Path(directory)
        if self._file is not None:
            self._file.flush()
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.path, target / "session.jsonl")
        for source in self.directory.iterdir():
            if EVIDENCE_FILE.fullmatch(source.name) and stat.S_ISREG(os.lstat(source).st_mode):
                shutil.copyfile(source, target / source.name, follow_symlinks=False)
        return target

    def report(self, path: str | Path | None = None) -> Report:
        """The session's report: it displays as the report in a notebook, ``.html`` is the self-contained file and
        ``.save(path)`` writes it (as passing ``path`` here does)."""
        from .report import Report

        report = Report(self)
        if path is not None:
            report.save(path)
        return report

    def __repr__(self) -> str:
        state = "recording" if self.recording else "closed"
        return f"<Session {self.header.id} {state}, {len(self.events)} events, {self.directory}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from .report import Report

        report = Report(self)
        return {"text/plain": f"{self!r}\n{report!r}", "text/html": report._repr_html_()}
