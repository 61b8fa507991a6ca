"""The lobby: who plays (identities), the time controls offered, seeks, challenge links, abuse limits.

- Time controls are presets (:data:`PRESETS`, Fischer ``minutes+increment``); their category
  (:func:`category_of`) follows lichess's estimate of a game's length, ``base + 40 × increment``
  seconds: under 3 min bullet, under 8 min blitz, under 25 min rapid, else classical. Ratings are
  kept per category.
- Seeks and challenges live in memory in the process that holds the lobby (embedded mode: the only
  one; several processes: :class:`SharedLobby`, rows of the online database copied in each); a
  seek ends when it is accepted or cancelled, or when its owner's last lobby socket closes (the web
  layer calls :meth:`Lobby.drop_seeks_of`); a challenge link lasts :data:`CHALLENGE_TTL_S`.
- :class:`SlidingWindow` counts events per key over a window (seeks per minute per player,
  registrations per address, open sockets are counted by the web layer).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime as _dt
import random
import secrets
import time
from collections.abc import Callable
from typing import Any

from xiangqi.app.play.clock import TimeControl
from xiangqi.core.errors import XiangqiError

__all__ = ["Identity", "Preset", "PRESETS", "CATEGORIES", "category_of", "Seek", "Challenge", "Lobby",
           "LobbyError", "SlidingWindow", "SEEKS_PER_MINUTE", "CHALLENGE_TTL_S", "SharedLobby"]

#: A player may create this many seeks (and challenges) per minute.
SEEKS_PER_MINUTE = 6
#: Seconds a challenge link stays valid.
CHALLENGE_TTL_S = 24 * 3600
CATEGORIES = ("bullet", "blitz", "rapid", "classical")


class LobbyError(XiangqiError):
    """A refused lobby action; ``status`` (HTTP) and ``code`` as in docs/ONLINE_API.md section 2."""

    def __init__(self, message: str, status: int = 400, code: str = "bad_request",
                 retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.retry_after = retry_after


@dataclasses.dataclass(frozen=True)
class Identity:
    """Who acts: ``kind`` ``user`` (``id`` the account id as text), ``guest`` (``id`` ``g-…``) or
    ``engine`` (``id`` ``engine:<level>``); ``name`` to show; ``user_id`` the account id or None."""

    kind: str
    id: str
    name: str
    user_id: int | None = None
    level: str | None = None

    def view(self) -> dict[str, Any]:
        """The contract's UserView."""
        if self.kind == "user":
            return {"id": self.user_id, "username": self.name, "kind": "user"}
        if self.kind == "engine":
            from xiangqi.app.opponents.players import levels

            en = next((lv.name_en for lv in levels() if lv.key == self.level), self.level)
            return {"id": self.id, "username": self.name, "username_en": en, "kind": "engine",
                    "level": self.level}
        return {"id": self.id, "username": self.name, "kind": "guest"}


def category_of(tc: TimeControl) -> str:
    """``bullet``/``blitz``/``rapid``/``classical`` from ``base + 40 × increment`` seconds (module text)."""
    est = tc.base_s + 40 * tc.increment_s
    if est < 180:
        return "bullet"
    if est < 480:
        return "blitz"
    if est < 1500:
        return "rapid"
    return "classical"


@dataclasses.dataclass(frozen=True)
class Preset:
    """A time control offered online: ``key`` (``"5+3"``) and its :class:`TimeControl`."""

    key: str
    control: TimeControl

    @property
    def category(self) -> str:
        """The rating category (:func:`category_of`)."""
        return category_of(self.control)

    def view(self) -> dict[str, Any]:
        """``{key, base_s, increment_s, category, describe_zh, describe_en}``."""
        c = self.control
        en = f"{int(c.base_s // 60)} min + {int(c.increment_s)} s"
        return {"key": self.key, "base_s": c.base_s, "increment_s": c.increment_s, "category": self.category,
                "describe_zh": c.describe_zh(), "describe_en": en}


def _fischer(minutes: float, inc: float) -> Preset:
    return Preset(f"{minutes:g}+{inc:g}", TimeControl("fischer", base_s=minutes * 60, increment_s=inc))


#: The time controls of the lobby (minutes + increment seconds).
PRESETS: dict[str, Preset] = {p.key: p for p in (
    _fischer(1, 0), _fischer(3, 2), _fischer(5, 3), _fischer(10, 5), _fischer(15, 10), _fischer(30, 20))}


class SlidingWindow:
    """At most ``limit`` events per key within ``window_s`` seconds (in memory; ``clock`` for tests)."""

    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self._events: dict[str, collections.deque[float]] = {}

    def hit(self, key: str) -> None:
        """Count one event for ``key``; raises :class:`LobbyError` (429, ``retry_after``) when the
        key has used up its events (the refused one is not counted)."""
        now = self.clock()
        q = self._events.setdefault(key, collections.deque())
        while q and q[0] <= now - self.window_s:
            q.popleft()
        if len(q) >= self.limit:
            wait = max(1, int(q[0] + self.window_s - now + 0.999))
            raise LobbyError(f"too many requests: at most {self.limit} in {self.window_s:g} s; "
                             f"try again in {wait} s", 429, "rate_limited", wait)
        q.append(now)
        self._bound()

    async def hit_async(self, key: str) -> None:
        """:meth:`hit` for the event loop (in memory: at once; the Redis window asks off the loop)."""
        self.hit(key)

    def note(self, key: str) -> None:
        """Count one event for ``key`` without a check (an event let through by a shared count, so
        that this process's own count is right should it have to decide alone)."""
        now = self.clock()
        q = self._events.setdefault(key, collections.deque())
        while q and q[0] <= now - self.window_s:
            q.popleft()
        q.append(now)
        self._bound()

    def _bound(self) -> None:
        if len(self._events) > 100_000:  # bounded memory
            for k in list(self._events)[:50_000]:
                del self._events[k]


def _utc() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def _iso(t: _dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclasses.dataclass
class Seek:
    """An open seek in the lobby."""

    id: str
    by: Identity
    preset: Preset
    rated: bool
    color: str  # red, black, random
    rating: dict[str, Any] | None
    created_at: _dt.datetime
    #: the client address the seek was made from (never shown: rating farming, DESIGN.md "Security")
    address: str | None = None

    def view(self) -> dict[str, Any]:
        """The contract's SeekView."""
        return {"id": self.id, "by": self.by.view(), "time_control": self.preset.key,
                "category": self.preset.category, "rated": self.rated, "color": self.color,
                "rating": None if self.rating is None else self.rating["rating"],
                "provisional": bool(self.rating and self.rating["provisional"]),
                "created_at": _iso(self.created_at)}


@dataclasses.dataclass
class Challenge:
    """A challenge link for a friend."""

    id: str
    by: Identity
    preset: Preset
    rated: bool
    color: str
    expires: float  # monotonic
    expires_at: _dt.datetime
    #: the client address the link was made from (never shown)
    address: str | None = None

    def view(self) -> dict[str, Any]:
        """``{id, url, by, time_control, category, rated, color, expires_at}``."""
        return {"id": self.id, "url": f"/?challenge={self.id}", "by": self.by.view(),
                "time_control": self.preset.key, "category": self.preset.category, "rated": self.rated,
                "color": self.color, "expires_at": _iso(self.expires_at)}


def seat_colors(color: str, rng: random.Random | None = None) -> bool:
    """True when the seek's owner plays Red (``color`` red/black/random)."""
    if color == "red":
        return True
    if color == "black":
        return False
    return (rng or random).random() < 0.5


class Lobby:
    """Open seeks and challenges; ``on_change()`` is called after each change of the seek list.
    ``presets``: the time controls accepted (default :data:`PRESETS`)."""

    def __init__(self, on_change: Callable[[], None] = lambda: None, *,
                 seeks_per_minute: int = SEEKS_PER_MINUTE, clock: Callable[[], float] = time.monotonic,
                 presets: dict[str, Preset] | None = None) -> None:
        self.presets = dict(PRESETS if presets is None else presets)
        self.seeks: dict[str, Seek] = {}
        self.challenges: dict[str, Challenge] = {}
        self.on_change = on_change
        self.clock = clock
        self.limiter = SlidingWindow(seeks_per_minute, 60.0, clock)
        self.version = 0

    def _changed(self) -> None:
        self.version += 1
        self.on_change()

    def check(self, preset_key: str, rated: bool, color: str, who: Identity) -> Preset:
        preset = self.presets.get(preset_key)
        if preset is None:
            raise LobbyError(f"unknown time control {preset_key!r}: one of {', '.join(self.presets)}")
        if color not in ("red", "black", "random"):
            raise LobbyError(f"color must be red, black or random, got {color!r}")
        if rated and who.kind != "user":
            raise LobbyError("guests play casual games only: log in to play rated", 400, "login_required")
        return preset

    def _one_seek(self, who: Identity) -> None:
        if any(s.by.id == who.id for s in self.seeks.values()):
            raise LobbyError("you already have an open seek: cancel it first", 409, "conflict")

    def create_seek(self, who: Identity, preset_key: str, rated: bool, color: str,
                    rating: dict[str, Any] | None, *, limit: bool = True, address: str | None = None) -> Seek:
        """A new seek by ``who`` (from client ``address``); raises :class:`LobbyError` for a bad time
        control or colour, a rated seek by a guest, a second open seek (409) or too many seeks a
        minute (429; ``limit=False``: counted already)."""
        preset = self.check(preset_key, rated, color, who)
        self._one_seek(who)
        if limit:
            self.limiter.hit(who.id)
        seek = Seek("s-" + secrets.token_urlsafe(9), who, preset, rated, color, rating, _utc(), address)
        self.seeks[seek.id] = seek
        self._changed()
        return seek

    def cancel_seek(self, who: Identity, seek_id: str) -> None:
        """Remove ``who``'s seek (403 for another's, 404 when gone)."""
        seek = self.seeks.get(seek_id)
        if seek is None:
            raise LobbyError(f"no open seek {seek_id!r}", 404, "not_found")
        if seek.by.id != who.id:
            raise LobbyError("that seek is not yours", 403, "forbidden")
        del self.seeks[seek_id]
        self._changed()

    def take_seek(self, who: Identity, seek_id: str) -> Seek:
        """Accept a seek: it leaves the lobby and is returned (400 for one's own, 404 when gone, 401 for a
        guest and a rated seek)."""
        seek = self.seeks.get(seek_id)
        if seek is None:
            raise LobbyError(f"no open seek {seek_id!r}: it was accepted or cancelled", 404, "not_found")
        if seek.by.id == who.id:
            raise LobbyError("you cannot accept your own seek", 400, "bad_request")
        if seek.rated and who.kind != "user":
            raise LobbyError("this is a rated seek: log in to accept it", 401, "login_required")
        del self.seeks[seek_id]
        self._changed()
        return seek

    def drop_seeks_of(self, who_id: str) -> None:
        """Remove every seek of an identity (its owner went away)."""
        gone = [k for k, s in self.seeks.items() if s.by.id == who_id]
        for k in gone:
            del self.seeks[k]
        if gone:
            self._changed()

    def create_challenge(self, who: Identity, preset_key: str, rated: bool, color: str, *,
                         limit: bool = True, address: str | None = None) -> Challenge:
        """A challenge link (same checks and rate limit as a seek; ``limit=False``: counted already;
        ``address``: the client's)."""
        preset = self.check(preset_key, rated, color, who)
        if limit:
            self.limiter.hit(who.id)
        self._expire()
        ch = Challenge("c-" + secrets.token_urlsafe(12), who, preset, rated, color,
                       self.clock() + CHALLENGE_TTL_S, _utc() + _dt.timedelta(seconds=CHALLENGE_TTL_S),
                       address)
        self.challenges[ch.id] = ch
        return ch

    def challenge(self, challenge_id: str) -> Challenge:
        """The open challenge (404 when unknown, accepted, cancelled or expired)."""
        self._expire()
        ch = self.challenges.get(challenge_id)
        if ch is None:
            raise LobbyError("this challenge link is no longer open", 404, "not_found")
        return ch

    def take_challenge(self, who: Identity, challenge_id: str) -> Challenge:
        """Accept a challenge: it is closed and returned (400 for one's own)."""
        ch = self.challenge(challenge_id)
        if ch.by.id == who.id:
            raise LobbyError("this is your own challenge: send the link to a friend", 400, "bad_request")
        if ch.rated and who.kind != "user":
            raise LobbyError("this is a rated challenge: log in to accept it", 401, "login_required")
        del self.challenges[challenge_id]
        return ch

    def cancel_challenge(self, who: Identity, challenge_id: str) -> None:
        """Close ``who``'s challenge (403 for another's)."""
        ch = self.challenge(challenge_id)
        if ch.by.id != who.id:
            raise LobbyError("that challenge is not yours", 403, "forbidden")
        del self.challenges[challenge_id]

    def _expire(self) -> None:
        now = self.clock()
        for k in [k for k, c in self.challenges.items() if c.expires <= now]:
            del self.challenges[k]


class SharedLobby(Lobby):
    """The lobby of several server processes (shared mode): the open seeks and challenges are rows of
    the online database (``online_lobby``, the truth: accepting deletes the row, and only the one
    process whose delete matched a row starts the game), copied in every process's memory and kept
    in step over the bus (channel ``lobby:sync``: ``add`` / ``del``). A process that stops beating
    has its seeks withdrawn by the others (:meth:`process_gone`); challenge links stay (24 h).

    ``store``: the :class:`~xiangqi.online.store.OnlineStore`; ``service``: what holds the bus
    (``service.bus``) and this process's id (``service.proc``)."""

    CHANNEL = "lobby:sync"

    def __init__(self, on_change: Callable[[], None] = lambda: None, *, store: Any, service: Any,
                 **kw: Any) -> None:
        super().__init__(on_change, **kw)
        self.store = store
        self.service = service
        #: the items made here whose row is being inserted (:meth:`create_seek_async`): an acceptance
        #: or a cancel of one waits for its insert first (the row exists before anyone may take it)
        self._storing: dict[str, asyncio.Future[None]] = {}
        #: the identities whose seek is being counted by the rate limit (:meth:`create_seek_async`):
        #: a second seek sent meanwhile is refused as if the first were open
        self._seeking: set[str] = set()

    def start(self) -> None:
        """Subscribe to the other processes' changes and load the open items (on the server's loop)."""
        self.service.bus.subscribe(self.CHANNEL, self._on_bus)
        self._load()

    def _load(self) -> None:
        for kind, item, proc in self.store.lobby_items():
            self._put(kind, item)
            if isinstance(proc, str) and proc != self.service.proc:  # its holder counts as alive until
                self.service.seen(proc)  # the TTL says otherwise: seeks of a process that died are withdrawn

    # -- JSON forms --------------------------------------------------------------------------------

    @staticmethod
    def _json(kind: str, x: Seek | Challenge) -> dict[str, Any]:
        out = {"id": x.id, "by": dataclasses.asdict(x.by), "preset": x.preset.key, "rated": x.rated,
               "color": x.color, "address": x.address}
        if isinstance(x, Seek):
            out.update(rating=x.rating, created_at=x.created_at.timestamp())
        else:
            out.update(expires_at=x.expires_at.timestamp())
        return out

    def _put(self, kind: str, item: dict[str, Any]) -> None:
        preset = self.presets.get(item["preset"])
        if preset is None:
            return
        by = Identity(**item["by"])
        if kind == "seek":
            made = _dt.datetime.fromtimestamp(item["created_at"], _dt.UTC)
            self.seeks[item["id"]] = Seek(item["id"], by, preset, item["rated"], item["color"],
                                          item["rating"], made, item.get("address"))
        else:
            at = _dt.datetime.fromtimestamp(item["expires_at"], _dt.UTC)
            mono = self.clock() + (item["expires_at"] - time.time())
            self.challenges[item["id"]] = Challenge(item["id"], by, preset, item["rated"], item["color"],
                                                    mono, at, item.get("address"))

    def _publish(self, msg: dict[str, Any]) -> None:
        self.service.bus.publish(self.CHANNEL, {**msg, "proc": self.service.proc})

    def _on_bus(self, msg: dict[str, Any]) -> None:
        proc = msg.get("proc")
        if proc == self.service.proc:
            return
        if isinstance(proc, str):  # a message is a sign of life: a process gone before its first
            self.service.seen(proc)  # heartbeat reached here still has its seeks withdrawn
        if msg.get("op") == "add":
            self._put(msg["kind"], msg["item"])
        elif msg.get("op") == "del":
            self.seeks.pop(msg["id"], None)
            self.challenges.pop(msg["id"], None)
        self.version += 1  # the other process sent the lobby view itself

    def _take(self, item_id: str) -> bool:
        won = self.store.take_lobby_item(item_id)
        self._publish({"op": "del", "id": item_id})
        return won

    async def _take_async(self, item_id: str) -> bool:
        """:meth:`_take` with the delete in a worker thread (``service.run_db``), after the item's insert
        when it was made here a moment ago (:meth:`_stored`)."""
        await self._stored(item_id)
        won = await self.service.run_db(self.store.take_lobby_item, item_id)
        self._publish({"op": "del", "id": item_id})
        return won

    async def take_seek_async(self, who: Identity, seek_id: str) -> Seek:
        """:meth:`take_seek` with the database calls off the event loop (a slow database delays only
        this acceptance)."""
        await self._stored(seek_id)
        if seek_id not in self.seeks:
            for kind, item, _proc in await self.service.run_db(self.store.lobby_items):
                self._put(kind, item)
        seek = Lobby.take_seek(self, who, seek_id)
        if not await self._take_async(seek_id):
            raise LobbyError(f"no open seek {seek_id!r}: it was accepted or cancelled", 404, "not_found")
        return seek

    async def take_challenge_async(self, who: Identity, challenge_id: str) -> Challenge:
        """:meth:`take_challenge` with the database calls off the event loop."""
        await self._stored(challenge_id)
        if challenge_id not in self.challenges:
            for kind, item, _proc in await self.service.run_db(self.store.lobby_items):
                self._put(kind, item)
        ch = Lobby.take_challenge(self, who, challenge_id)
        if not await self._take_async(challenge_id):
            raise LobbyError("this challenge link is no longer open", 404, "not_found")
        return ch

    async def _stored(self, item_id: str) -> None:
        """Wait until the row of an item made here is inserted (nothing to wait for otherwise)."""
        fut = self._storing.get(item_id)
        if fut is not None:
            await asyncio.shield(fut)

    async def _insert(self, kind: str, x: Seek | Challenge, expires_at: Any = None) -> None:
        """Insert the row of ``x`` (already in this process's memory) in a worker thread, then tell the
        other processes; a failed insert takes ``x`` out again and raises :class:`LobbyError` (503)."""
        item = self._json(kind, x)
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._storing[x.id] = fut
        try:
            await self.service.run_db(self.store.add_lobby_item, x.id, kind, item, self.service.proc,
                                      expires_at)
        except Exception as exc:
            self.seeks.pop(x.id, None)
            self.challenges.pop(x.id, None)
            self._changed()
            raise LobbyError("the lobby could not be stored: try again", 503, "unavailable", 5) from exc
        finally:
            del self._storing[x.id]
            fut.set_result(None)
        self._publish({"op": "add", "kind": kind, "item": item})

    async def _load_async(self) -> None:
        for kind, item, _proc in await self.service.run_db(self.store.lobby_items):
            self._put(kind, item)

    async def create_seek_async(self, who: Identity, preset_key: str, rated: bool, color: str,
                                rating: dict[str, Any] | None, address: str | None = None) -> Seek:
        """:meth:`create_seek` with the insert off the event loop. The checks (one open seek each, the
        rate limit) and the seek's place in memory happen at once, before the insert, so that a
        second seek of the same player sent meanwhile is refused as before; an acceptance or cancel
        of this seek on this process waits for the insert (:meth:`_stored`). The rate limit is asked
        off the loop too (:meth:`~xiangqi.online.limits.RedisWindow.hit_async`); while it answers,
        the player counts as having an open seek."""
        self.check(preset_key, rated, color, who)
        if who.id in self._seeking:
            raise LobbyError("you already have an open seek: cancel it first", 409, "conflict")
        self._one_seek(who)
        self._seeking.add(who.id)
        try:
            await self.limiter.hit_async(who.id)
        finally:
            self._seeking.discard(who.id)
        seek = Lobby.create_seek(self, who, preset_key, rated, color, rating, limit=False, address=address)
        await self._insert("seek", seek)
        return seek

    async def cancel_seek_async(self, who: Identity, seek_id: str) -> None:
        """:meth:`cancel_seek` with the database calls off the event loop."""
        await self._stored(seek_id)
        if seek_id not in self.seeks:
            await self._load_async()
        Lobby.cancel_seek(self, who, seek_id)
        await self._take_async(seek_id)

    async def create_challenge_async(self, who: Identity, preset_key: str, rated: bool,
                                     color: str, address: str | None = None) -> Challenge:
        """:meth:`create_challenge` with the rate limit and the insert off the event loop (as
        :meth:`create_seek_async`)."""
        self.check(preset_key, rated, color, who)
        await self.limiter.hit_async(who.id)
        ch = Lobby.create_challenge(self, who, preset_key, rated, color, limit=False, address=address)
        await self._insert("challenge", ch, ch.expires_at)
        return ch

    async def challenge_async(self, challenge_id: str) -> Challenge:
        """:meth:`challenge` with the store's read (a link made on another process) off the event loop."""
        await self._stored(challenge_id)
        if challenge_id not in self.challenges:
            await self._load_async()
        return Lobby.challenge(self, challenge_id)

    async def cancel_challenge_async(self, who: Identity, challenge_id: str) -> None:
        """:meth:`cancel_challenge` with the database calls off the event loop."""
        await self.challenge_async(challenge_id)
        Lobby.cancel_challenge(self, who, challenge_id)
        await self._take_async(challenge_id)

    async def drop_seeks_of_async(self, who_id: str) -> None:
        """:meth:`drop_seeks_of` with the deletes off the event loop."""
        gone = [k for k, s in self.seeks.items() if s.by.id == who_id]
        Lobby.drop_seeks_of(self, who_id)
        for k in gone:
            await self._take_async(k)

    # -- the Lobby's operations, through the store ---------------------------------------------------

    def create_seek(self, who: Identity, preset_key: str, rated: bool, color: str,
                    rating: dict[str, Any] | None, *, limit: bool = True, address: str | None = None) -> Seek:
        """:meth:`Lobby.create_seek`, stored and announced."""
        seek = super().create_seek(who, preset_key, rated, color, rating, limit=limit, address=address)
        item = self._json("seek", seek)
        self.store.add_lobby_item(seek.id, "seek", item, self.service.proc)
        self._publish({"op": "add", "kind": "seek", "item": item})
        return seek

    def cancel_seek(self, who: Identity, seek_id: str) -> None:
        """:meth:`Lobby.cancel_seek`, deleted from the store."""
        if seek_id not in self.seeks:
            self._load()
        super().cancel_seek(who, seek_id)
        self._take(seek_id)

    def take_seek(self, who: Identity, seek_id: str) -> Seek:
        """:meth:`Lobby.take_seek`; 404 when another process took it first."""
        if seek_id not in self.seeks:
            self._load()
        seek = super().take_seek(who, seek_id)
        if not self._take(seek_id):
            raise LobbyError(f"no open seek {seek_id!r}: it was accepted or cancelled", 404, "not_found")
        return seek

    def drop_seeks_of(self, who_id: str) -> None:
        """:meth:`Lobby.drop_seeks_of`, deleted from the store."""
        gone = [k for k, s in self.seeks.items() if s.by.id == who_id]
        super().drop_seeks_of(who_id)
        for k in gone:
            self._take(k)

    def process_gone(self, proc: str) -> None:
        """Withdraw the seeks a gone process held (their owners' lobby sockets were there)."""
        self.withdraw(self.store.drop_lobby_items_of(proc))

    def withdraw(self, ids: list[str]) -> None:
        """Forget the seeks ``ids``, deleted from the store already (a gone process's), and tell the
        other processes."""
        for k in ids:
            self.seeks.pop(k, None)
            self._publish({"op": "del", "id": k})
        if ids:
            self._changed()

    def create_challenge(self, who: Identity, preset_key: str, rated: bool, color: str, *,
                         limit: bool = True, address: str | None = None) -> Challenge:
        """:meth:`Lobby.create_challenge`, stored and announced."""
        ch = super().create_challenge(who, preset_key, rated, color, limit=limit, address=address)
        item = self._json("challenge", ch)
        self.store.add_lobby_item(ch.id, "challenge", item, self.service.proc, ch.expires_at)
        self._publish({"op": "add", "kind": "challenge", "item": item})
        return ch

    def challenge(self, challenge_id: str) -> Challenge:
        """:meth:`Lobby.challenge`, loading the store's when this process has not heard of it."""
        if challenge_id not in self.challenges:
            self._load()
        return super().challenge(challenge_id)

    def take_challenge(self, who: Identity, challenge_id: str) -> Challenge:
        """:meth:`Lobby.take_challenge`; 404 when another process took it first."""
        ch = super().take_challenge(who, challenge_id)
        if not self._take(challenge_id):
            raise LobbyError("this challenge link is no longer open", 404, "not_found")
        return ch

    def cancel_challenge(self, who: Identity, challenge_id: str) -> None:
        """:meth:`Lobby.cancel_challenge`, deleted from the store."""
        super().cancel_challenge(who, challenge_id)
        self._take(challenge_id)
