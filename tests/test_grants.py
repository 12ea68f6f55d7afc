"""Per-site grants without a browser: sites as origins (so ``https://bank.example`` never matches
``https://bank.example.evil.test``), the grant file (0600, atomic, never through a link; a corrupt, linked,
foreign or group-writable file is refused, counts as no grants and is never written over), ``webmcp-nb grants``
and ``wm.grants``; and the relay's checks, asks and answers between real clients (``Connection``) of a real relay:
the first answer wins, ``once`` allows one action, ``never`` refuses without asking, an unanswered ask times out,
an ask is withdrawn when its caller gives up, and every ask, answer and refusal is an event."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import webmcp_nb as wm
from webmcp_nb.core.errors import PermissionDeniedError
from webmcp_nb.link.connection import Connection
from webmcp_nb.link.grant_asks import MAX_WAITING
from webmcp_nb.link.grants import GrantError, GrantFileError, GrantStore, origin_of
from webmcp_nb.link.protocol import Method
from webmcp_nb.link.relay import Relay

BANK = "https://bank.example"
SECRET = "a-test-secret-of-some-length"


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://Bank.Example:443/login?next=/pay#top", BANK),
        ("https://user:pass@bank.example/", BANK),
        ("https://bank.example.evil.test/", "https://bank.example.evil.test"),
        ("https://evil.test/bank.example", "https://evil.test"),
        ("http://bank.example:80/", "http://bank.example"),
        ("http://bank.example:8080/", "http://bank.example:8080"),
        ("http://127.0.0.1:8000/flights/", "http://127.0.0.1:8000"),
        ("http://[::1]:9/x", "http://[::1]:9"),
        ("https://bücher.example/", None),  # Chrome writes it xn--bcher-kva: granted in that form
        ("https://xn--bcher-kva.example/", "https://xn--bcher-kva.example"),
        ("file:///home/me/page.html", "file://"),
        ("about:blank", None),
        ("data:text/html,<b>hi</b>", None),
        ("chrome://settings", None),
        ("javascript:alert(1)", None),
        ("https://bank.example:99999/", None),
        ("https://bank.example%2f.evil.test/", None),
        ("", None),
        # What Chrome reads as another site than urlsplit does is no site at all: it can never be granted.
        ("http://127.0.0.1:8001\\@127.0.0.1:8002/", None),  # Chrome: 127.0.0.1:8001 (a backslash ends the host)
        ("https://bank.example\\@evil.test/", None),
        ("https://faß.de/", None),  # IDNA 2003 says fass.de, Chrome xn--fa-hia.de
        ("https://\u13a0.example/", None),  # IDNA 2003 says xn--kz9a, Chrome xn--58d
        ("https://[::1%25eth0]/", None),
        ("http://0x7f.1:8000/", None),  # Chrome: 127.0.0.1:8000
        ("http://2130706433/", None),
        ("http://exa\x01mple.com/", None),
        ("http://[0:0:0:0:0:0:0:1]:9/", "http://[::1]:9"),  # as Chrome writes it
    ],
)
def test_a_site_is_its_origin(url: str, site: str | None) -> None:
    assert origin_of(url) == site


def test_grants_are_kept_per_site_in_a_private_file_written_atomically(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "grants.json")
    assert store.level(f"{BANK}/account") == "ask"  # never granted
    store.allow(f"{BANK}/account?x=1", "read", by="cli")  # a URL of the site: its path is dropped
    assert store.level(f"{BANK}/other") == "read"
    assert store.level("https://bank.example.evil.test/") == "ask"  # a longer host is another site
    assert store.level("http://bank.example/") == "ask"  # so is another scheme
    assert store.level("https://bank.example:8443/") == "ask"  # and another port
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    store.allow(BANK, "act")
    store.deny("https://mail.example")
    assert [(g.origin, g.level) for g in store] == [(BANK, "act"), ("https://mail.example", "none")]
    assert store.revoke(BANK) and not store.revoke(BANK)
    assert store.level(BANK) == "ask" and store.level("about:blank") == "none"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grants.json", "grants.json.lock"]  # no temporary left
    with pytest.raises(GrantError, match="not a site"):
        store.allow("bank.example", "read")
    with pytest.raises(GrantError, match="level must be one of none, read, act"):
        store.allow(BANK, "admin")


def _refused(store: GrantStore, why: str) -> None:
    """A file the store must not trust: no site granted, the reason said, and nothing written over it."""
    before = store.path.read_bytes() if store.path.exists() else None
    snapshot = store.snapshot()
    assert snapshot.grants == {} and snapshot.problem and why in snapshot.problem, snapshot.problem
    assert store.level(BANK) == "ask"
    with pytest.raises(GrantFileError, match=why):
        store.allow(BANK, "act")
    assert (store.path.read_bytes() if store.path.exists() else None) == before


def test_a_corrupt_file_is_refused_and_counts_as_no_grants(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "grants.json")
    for body in (
        "{not json",
        '{"version": 2, "grants": {}}',
        json.dumps({"version": 1, "grants": {BANK: {"level": "admin"}}}),
        json.dumps({"version": 1, "grants": {"https://bank.example/path": {"level": "act"}}}),  # not an origin
        json.dumps({"version": 1, "grants": {BANK: {"level": "act"}, "x": {"level": "act"}}}),  # one bad entry
    ):
        store.path.write_text(body)
        store.path.chmod(0o600)
        _refused(store, "not a grant file")
    store.path.write_text(json.dumps({"version": 1, "grants": {BANK: {"level": "act"}}}))
    store.path.chmod(0o666)  # anyone could have written it
    _refused(store, "writable by others")


def test_a_link_is_refused_and_nothing_is_written_through_it(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"version": 1, "grants": {BANK: {"level": "act", "since": 1, "by": "x"}}}) + "\n")
    target.chmod(0o600)
    store = GrantStore(tmp_path / "grants.json")
    store.path.symlink_to(target)
    _refused(store, "symbolic link")
    assert store.path.is_symlink() and json.loads(target.read_text())["grants"][BANK]["by"] == "x"


def test_a_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "grants.json")
    os.mkfifo(store.path)  # opening a pipe to read would wait for a writer forever
    assert "not a regular file" in (store.snapshot().problem or "") and store.level(BANK) == "ask"
    with pytest.raises(GrantFileError, match="not a regular file"):
        store.allow(BANK, "act")


def test_a_file_of_another_user_is_refused(tmp_path: Path) -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("giving the file to another user needs root")
    store = GrantStore(tmp_path / "grants.json")
    store.allow(BANK, "act")
    os.chown(store.path, 65534, 65534)
    _refused(store, "belongs to another user")


def test_the_grants_command_and_wm_grants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBMCP_NB_HOME", str(tmp_path))
    env = {**os.environ, "WEBMCP_NB_HOME": str(tmp_path)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "webmcp_nb", "grants", *args], env=env, capture_output=True, text=True
        )

    assert "no grants yet: every site asks first" in cli().stdout
    allowed = cli("allow", f"{BANK}/login", "act")
    assert allowed.returncode == 0 and allowed.stdout.strip() == f"{BANK}: act"
    assert wm.grants.level(f"{BANK}/x") == "act"  # the same file
    bad = cli("allow", "bank.example", "read")
    assert bad.returncode == 2 and "not a site" in bad.stderr
    wm.grants.allow("https://mail.example", "read")
    listed = cli("list")
    assert listed.returncode == 0 and "https://mail.example  read" in listed.stdout and f"{BANK}  act" in listed.stdout
    assert "https://mail.example" in wm.grants._repr_mimebundle_()["text/html"]
    assert cli("revoke", f"{BANK}/login").stdout.strip() == f"{BANK}: revoked: it asks again"  # the site it names
    assert cli("deny", BANK).returncode == 0 and wm.grants.level(BANK) == "none"
    (tmp_path / "grants.json").write_text("{broken")
    broken = cli("list")
    assert broken.returncode == 1 and "not a grant file" in broken.stderr
    refused = cli("allow", BANK, "read")
    assert refused.returncode == 1 and "not a grant file" in refused.stderr
    assert (tmp_path / "grants.json").read_text() == "{broken"  # the user's file is left for them to fix


# ----- the relay: checks, asks and answers between real clients -----


class Client:
    """A real client of the relay (``Connection``), with every ``grant.event`` it was sent."""

    def __init__(self, relay: Relay) -> None:
        self.connection = Connection(relay.port, SECRET)
        self.events: list[dict[str, Any]] = []
        self.states: list[dict[str, Any]] = []
        self.connection.add_listener(self._heard)

    def _heard(self, method: str, params: dict[str, Any]) -> None:
        if method == Method.GRANT_EVENT.value:
            self.events.append(params["event"])
        elif method == Method.GRANTS_UPDATED.value:
            self.states.append(params)

    async def check(self, need: str, url: str = f"{BANK}/pay", **more: Any) -> dict[str, Any]:
        params = {"need": need, "url": url, "who": {"kind": "mcp", "name": "Hostile Desktop"}, "action": "call"}
        params |= {"tool": "sendMoney", "risk": "high", "timeoutMs": 20_000, **more}
        reply: dict[str, Any] = await self.connection.request(Method.GRANTS_CHECK.value, params, 30)
        return reply

    async def answer(self, ask_id: str, answer: str) -> dict[str, Any]:
        params = {"id": ask_id, "answer": answer, "by": "panel"}
        reply: dict[str, Any] = await self.connection.request(Method.GRANTS_ANSWER.value, params, 10)
        return reply

    def kinds(self) -> list[str]:
        return [e["kind"] for e in self.events]


async def _asked(client: Client, count: int) -> dict[str, Any]:
    for _ in range(500):
        asked = [e for e in client.events if e["kind"] == "grant.asked"]
        if len(asked) >= count:
            return asked[count - 1]["data"]
        await asyncio.sleep(0.01)
    raise AssertionError(f"no ask {count}: {client.kinds()}")


@asynccontextmanager
async def _asker_and_viewer(store: GrantStore) -> AsyncIterator[tuple[Relay, Client, Client]]:
    """A relay that enforces ``store``, with two real clients: one that checks, one that answers as a view."""
    relay = await Relay(SECRET, grants=store, enforce_grants=True).start()
    asker, viewer = Client(relay), Client(relay)
    try:
        await asker.connection.open()
        await viewer.connection.open()
        yield relay, asker, viewer
    finally:
        await asker.connection.close()
        await viewer.connection.close()
        await relay.close()


def test_the_relay_asks_takes_the_first_answer_and_writes_what_it_says(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "grants.json")

    async def scenario() -> None:
        async with _asker_and_viewer(store) as (relay, asker, viewer):
            # Never granted: the check waits; both clients hear the ask; the first answer wins, a second is refused.
            pending = asyncio.ensure_future(asker.check("act"))
            ask = await _asked(viewer, 1)
            assert ask["site"] == BANK and ask["need"] == "act" and ask["who"] == "Hostile Desktop"
            assert ask["tool"] == "sendMoney" and ask["risk"] == "high" and ask["origin"] == "mcp"
            assert (await viewer.answer(ask["id"], "once"))["allowed"]
            with pytest.raises(Exception, match=r"no ask .* is waiting"):
                await asker.answer(ask["id"], "never")
            assert (await pending)["answer"] == "once" and store.level(BANK) == "ask"  # once: nothing written

            # Once holds only where the caller says it does: the next check asks again.
            pending = asyncio.ensure_future(asker.check("read"))
            ask = await _asked(viewer, 2)
            assert (await viewer.answer(ask["id"], "read"))["allowed"]
            await pending
            assert store.level(BANK) == "read" and (await asker.check("read"))["level"] == "read"  # no ask now

            # Read does not let it act: it asks; an answer of read refuses the act, saying why.
            pending = asyncio.ensure_future(asker.check("act"))
            ask = await _asked(viewer, 3)
            await viewer.answer(ask["id"], "read")
            with pytest.raises(PermissionDeniedError, match="granted for reading only"):
                await pending

            # Never: refused at once, without asking, until the user changes it.
            pending = asyncio.ensure_future(asker.check("act"))
            await viewer.answer((await _asked(viewer, 4))["id"], "never")
            with pytest.raises(PermissionDeniedError, match="chose never"):
                await pending
            with pytest.raises(PermissionDeniedError, match="chose never"):
                await asker.check("read")
            assert len([k for k in viewer.kinds() if k == "grant.asked"]) == 4

            # A revoke (here through the relay, as the side panel does) counts from the next check.
            await viewer.connection.request(Method.GRANTS_REVOKE.value, {"origin": BANK}, 10)
            assert store.level(BANK) == "ask"
            pending = asyncio.ensure_future(asker.check("read", timeoutMs=300))  # nobody answers this one
            with pytest.raises(PermissionDeniedError, match=r"nobody answered the ask within 0\.3 s"):
                await pending

            # A file written elsewhere (webmcp-nb grants) counts at the next check, and the views hear of it.
            store.allow(BANK, "act", by="cli")
            assert (await asker.check("act"))["level"] == "act"
            for _ in range(300):
                if any(e["kind"] == "grant.changed" and e["data"]["by"] == "cli" for e in viewer.events):
                    break
                await asyncio.sleep(0.01)
            assert viewer.states[-1]["grants"][0]["level"] == "act"

            # A caller that gives up withdraws its ask; a page of no site is refused without asking.
            pending = asyncio.ensure_future(asker.check("read", url="https://mail.example/inbox"))
            await _asked(viewer, 6)
            pending.cancel()
            for _ in range(300):
                if viewer.events[-1]["kind"] == "grant.refused":
                    break
                await asyncio.sleep(0.01)
            assert viewer.events[-1]["data"]["why"] == "withdrawn" and not relay.grant_asks.state()["asks"]
            with pytest.raises(PermissionDeniedError, match="not a site that can be granted"):
                await asker.check("read", url="about:blank")

            # An ask to act on a site granted for reading that nobody answers says the site may read, not "not granted".
            store.allow(BANK, "read", by="cli")
            unanswered = (
                r"granted for reading only, and call sendMoney needs act: nobody answered the ask within 0\.3 s"
            )
            with pytest.raises(PermissionDeniedError, match=unanswered) as refused:
                await asker.check("act", timeoutMs=300)
            assert "not granted" not in str(refused.value) and "grants allow https://bank.example act" in str(
                refused.value
            )
            # The panels' Sites lists only revoke: the way to change a level there is said as a revoke.
            assert "revoking it in the Sites list" in str(refused.value)
        kinds = viewer.kinds()
        assert kinds.count("grant.answered") == 4 and kinds.count("grant.refused") == 5
        assert asker.events == viewer.events  # every client hears the same

    asyncio.run(scenario())


def test_one_client_has_at_most_a_few_asks_waiting_for_the_user(tmp_path: Path) -> None:
    """A client that fires checks on many sites never granted (a hostile MCP client burying the side panel in cards)
    gets MAX_WAITING asks; the rest are refused at once, saying why; another client still asks; once one of the
    first is answered, the client may ask again."""
    store = GrantStore(tmp_path / "grants.json")

    async def scenario() -> None:
        async with _asker_and_viewer(store) as (_, asker, viewer):
            sites = [f"https://site{n}.example" for n in range(MAX_WAITING + 2)]
            pending = [asyncio.ensure_future(asker.check("read", url=f"{site}/")) for site in sites]
            first = await _asked(viewer, MAX_WAITING)
            for _ in range(500):  # the two past the limit are answered at once, the others wait for the user
                if sum(f.done() for f in pending) == 2:
                    break
                await asyncio.sleep(0.01)
            refused = [str(f.exception()) for f in pending if f.done()]
            assert len(refused) == 2 and all(f"already has {MAX_WAITING} questions waiting" in r for r in refused)
            assert [e["kind"] for e in viewer.events].count("grant.asked") == MAX_WAITING
            theirs = asyncio.ensure_future(viewer.check("read", url="https://other.example/"))  # its own count
            await viewer.answer((await _asked(viewer, MAX_WAITING + 1))["id"], "once")
            assert (await theirs)["answer"] == "once"
            await viewer.answer(first["id"], "once")
            again = asyncio.ensure_future(asker.check("read", url="https://again.example/"))
            await viewer.answer((await _asked(viewer, MAX_WAITING + 2))["id"], "once")
            assert (await again)["answer"] == "once"
            for future in pending:
                future.cancel()

    asyncio.run(scenario())


def test_a_once_counts_only_for_the_site_it_was_answered_for(tmp_path: Path) -> None:
    """A caller sends what ``once`` allowed in its task along with the site it was for; a tab that moved to another
    site since (a page navigating itself) asks there again."""
    store = GrantStore(tmp_path / "grants.json")

    async def scenario() -> None:
        async with _asker_and_viewer(store) as (_, asker, viewer):
            pending = asyncio.ensure_future(asker.check("act"))
            await viewer.answer((await _asked(viewer, 1))["id"], "once")
            assert (await pending)["site"] == BANK  # where the caller keeps its once
            assert (await asker.check("act", held="act", heldSite=BANK))["allowed"]  # no ask
            mail = "https://mail.example/inbox"
            for url, more in ((mail, {"held": "act", "heldSite": BANK}), (f"{BANK}/pay", {"held": "act"})):
                with pytest.raises(PermissionDeniedError, match="nobody answered"):
                    await asker.check("act", url, timeoutMs=200, **more)
            assert [e["data"]["site"] for e in viewer.events if e["kind"] == "grant.asked"] == [
                BANK,
                "https://mail.example",
                BANK,
            ]

    asyncio.run(scenario())


def test_a_relay_that_does_not_enforce_grants_allows_at_once_and_a_corrupt_file_widens_nothing(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "grants.json")

    async def scenario() -> None:
        relaxed = await Relay(SECRET, grants=store).start()  # launch()'s: exempt by default
        strict = await Relay(SECRET, grants=store, enforce_grants=True).start()
        clients = [Client(relaxed), Client(strict)]
        for client in clients:
            await client.connection.open()
        try:
            assert (await clients[0].check("act"))["level"] == "exempt" and not clients[0].events
            store.allow(BANK, "act")
            store.path.chmod(0o666)  # now untrusted: as if never granted
            pending = asyncio.ensure_future(clients[1].check("read", timeoutMs=200))
            with pytest.raises(PermissionDeniedError, match="nobody answered"):
                await pending
            state = await clients[1].connection.request(Method.GRANTS_LIST.value, {}, 10)
            assert state["grants"] == [] and "writable by others" in state["problem"] and state["enforced"]
        finally:
            for client in clients:
                await client.connection.close()
            await relaxed.close()
            await strict.close()

    asyncio.run(scenario())
