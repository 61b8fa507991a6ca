"""Online rooms and the online game service (``xiangqi serve --public``; docs/ONLINE_API.md).

An :class:`OnlineRoom` is a :class:`~xiangqi.app.play.hub.GameHub` (the same room the local game is:
one session changed under the room's lock, saved by the save step after every change, the
clock's watchdog ending the game when a flag falls, the computer's move loop for a computer seat,
versioned states) with what online play adds:

- two seats held by identities (:class:`~xiangqi.online.lobby.Identity`): a move, an offer or a
  resignation is accepted only from the seat's holder, and only for that seat's colour;
- its saves go to the online move log (:class:`RoomStore` → :class:`~xiangqi.online.store.OnlineStore`),
  the source of truth a restarted server takes the game up from;
- its states go out on the event bus (channel ``game:<id>``), to which every socket of the game —
  players and spectators, on any process — is subscribed;
- draw offers, takeback requests that the opponent accepts, abort before both sides moved, presence
  (a player's last socket gone → after :attr:`OnlineService.grace_s` the opponent may claim), the
  watch count, lag compensation (docs/ONLINE_API.md section 7);
- when the game ends: the result in the store, Glicko-2 ratings for a rated game, and the game into
  the games database (collection ``online``, with its computed ECCO code) for review.

Shared mode (:attr:`OnlineConfig.shared`: several processes on one database and one Redis): any
process may hold a copy of any room. Every change is made in a version-checked transaction (the
game row's ``revision``, :meth:`OnlineRoom._saving`), then announced on ``sync:<id>``; the other
copies apply it in bus order (or re-read the store on a gap) and send the state to their own
sockets (:attr:`GameHub.clients`). Presence is summed over the processes' announcements, which
lapse with a process's heartbeat; the lobby is :class:`~xiangqi.online.lobby.SharedLobby`.
DESIGN.md "Online" has the message flow and the failures.

:class:`OnlineService` holds the rooms (in the server's :class:`~xiangqi.app.play.hub.GameRegistry`), the
lobby, the accounts and guests, the bus and the stores; the routes of :mod:`xiangqi.web.online_api`
call it. Everything runs on the server's event loop; in the embedded mode database writes are short
transactions done in place (SQLite in WAL mode, a few hundred microseconds); in shared mode a room's
change is stored in a worker thread when its lock is released (:class:`_WritingLock`,
:meth:`OnlineService.run_db`), as are the re-reads, the ratings and the sweep; argon2 hashing and
the games-database export run in worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import functools
import hashlib
import hmac
import json
import logging
import secrets
import statistics
import time
import uuid
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

from xiangqi.app.play.clock import REAL_TIME, GameClock, TimeSource
from xiangqi.app.play.hub import Encoded, GameHub, GameRegistry, MoveProvider
from xiangqi.app.play.session import GameSession, SessionError
from xiangqi.app.play.store import StorageError
from xiangqi.core.board import BLACK, RED, STARTING_FEN, Color, Termination
from xiangqi.core.errors import XiangqiError
from xiangqi.core.outcome import SIDE_EN, SIDE_ZH, Outcome, draw, win
from xiangqi.online.accounts import AccountError, Accounts, RateLimited, User
from xiangqi.online.bus import EventBus, LocalBus
from xiangqi.online.lobby import PRESETS, Identity, Lobby, LobbyError, Preset, SlidingWindow, seat_colors
from xiangqi.online.ratings import rate_game, rating_view
from xiangqi.online.store import (
    RETRY_AFTER_S,
    DatabaseUnavailable,
    OnlineStore,
    common_prefix,
    is_outage,
    iso,
)

log = logging.getLogger(__name__)

__all__ = ["OnlineConfig", "OnlineRoom", "OnlineService", "RoomStore", "OnlineError", "state_update",
           "apply_update"]

#: A refused online action (status, code): the same class as the lobby's.
OnlineError = LobbyError
#: Most of a move's time the server credits back for network lag (seconds).
LAG_CAP_S = 0.3
#: Round trips kept per player for the lag estimate (their median counts).
RTT_SAMPLES = 5
#: Seconds the lobby's changes are gathered before its view goes out to the lobby sockets: the view
#: lists every game being played, so one view per seek and game start made a busy server's set-up
#: quadratic (DESIGN.md "Load"); a person does not see a tenth of a second.
LOBBY_COALESCE_S = 0.1
#: Shared mode: worker threads for the database calls of one process (:meth:`OnlineService.run_db`);
#: SQLAlchemy's default pool (5 connections and 10 more on demand) has a connection for each.
DB_THREADS = 8
#: Tries of a database step of the sweep or of a process's departure (:meth:`OnlineService._retrying`).
DB_RETRIES = 5
#: Seconds a finished game stays in memory without sockets (then it is rebuilt from the store on demand).
FINISHED_KEEP_S = 600.0
#: Shared mode: heartbeats of this process's own that may fail to come back through the bus (and
#: at least :data:`BUS_SILENT_MIN_S` seconds) before the bus counts as silent: presence is then
#: unknown (:meth:`OnlineService.presence_known`) and no other process is taken for gone.
BUS_SILENT_BEATS = 3
BUS_SILENT_MIN_S = 2.0
#: A game of two players that ends — by resignation, time, agreement, abort or a claim on a player who
#: left — before each side has made two moves (fewer than this many plies; Red moves first) ends as
#: aborted: no result, no rating change. lichess aborts (and does not rate) a game in which a side
#: has not moved (``playedTurns < 2``); one move more of each side is asked here, so that a pair
#: farming ratings must at least play an opening (issue 26). A result on the board (mate, stalemate,
#: a ruling) stands. DESIGN.md "Security".
ABORT_PLIES = 4
#: A game in which fewer plies were played (a side has not moved yet) is unplayed: starting or
#: accepting another game aborts it (:meth:`OnlineService._abort_unplayed`).
UNPLAYED_PLIES = 2
#: Seconds a side has for its first move in a game of two players, by the game's rating category
#: (:func:`~xiangqi.online.lobby.category_of`), counted from when its turn began: the game's start for
#: Red, Red's first move for Black. Past them the game is aborted (no result, no rating change) and
#: both players are told who did not move (the state's ``result``). A player who sits down and
#: never moves must not hold the opponent for the whole of a slow clock (issue 30). The values are
#: lichess's for games outside tournaments (lila, ``modules/round/src/main/RoundGame.scala``,
#: ``timeForFirstMove``: bullet 20 s, blitz 25 s, rapid 30 s, slower 35 s); as there, once both
#: sides have moved the clocks alone decide (a later flag falls as usual, :data:`ABORT_PLIES`
#: aside). Computer games have no such limit (the computer moves at once; lichess's ``expirable``
#: excludes them too).
FIRST_MOVE_S = {"bullet": 20.0, "blitz": 25.0, "rapid": 30.0, "classical": 35.0}
#: The ends before :data:`ABORT_PLIES` that abort (the board's own ends stand).
_ABORTABLE_ENDS = frozenset({Termination.RESIGNATION, Termination.TIMEOUT, Termination.AGREEMENT})
#: What an aborted game shows (its state's ``result``).
_ABORTED_RESULT = {"result": "*", "winner": None, "termination": "aborted",
                   "reason_zh": "对局已取消", "reason_en": "game aborted",
                   "headline_zh": "对局已取消", "headline_en": "Game aborted",
                   "why_zh": "双方各走满两步之前结束：不计结果、不计等级分",
                   "why_en": "it ended before each side made two moves: no result, no rating change"}
#: Part of the English reason of a game aborted because a side did not make its first move in time
#: (:data:`FIRST_MOVE_S`; :meth:`OnlineRoom._no_first_move`).
_NO_FIRST_MOVE_EN = "did not make a first move within"


@dataclasses.dataclass
class OnlineConfig:
    """Settings of the online service (defaults are the public server's; tests shorten them).

    ``db_url``: the online database (accounts, games, ratings; default ``sqlite:///<data dir>/online.db``).
    ``grace_s``: seconds after a player's last socket closed before the opponent may claim the win
    (``bullet_grace_s`` in bullet). ``hasher``: argon2 PasswordHasher (tests pass a fast one).
    ``move_provider``: the computer's move choice in computer games (tests), default the engine.
    ``presets``: extra time controls (tests: a one-second game). ``sockets_per_ip``: open WebSockets
    one address may hold. ``ping_s``: seconds between the server's pings on a game socket.
    ``max_computer_games``: computer games at once (each has its own engine);
    ``computer_games_per_player``: of those, the ones one identity (an account, a guest) may play at
    once, ``computer_games_per_address``: the ones started from one address (fresh guest cookies
    are free, an address is not; more than one player, as a family behind one NAT router may be
    several). Both counted in this process, as the slots are. ``redis_url``: below.
    """

    db_url: str | None = None
    grace_s: float = 20.0
    bullet_grace_s: float = 5.0
    hasher: Any = None
    move_provider: MoveProvider | None = None
    presets: dict[str, Preset] = dataclasses.field(default_factory=dict)
    seeks_per_minute: int = 6
    registrations_per_hour: int = 10
    sockets_per_ip: int = 20
    ping_s: float = 5.0
    max_computer_games: int = 8
    computer_games_per_player: int = 2
    computer_games_per_address: int = 4
    engine_delay_s: float = 0.0
    #: The event bus over Redis (``redis://…`` or ``unix://…``; :class:`~xiangqi.online.bus.RedisBus`)
    #: instead of the in-process one; it switches the shared mode on (below).
    redis_url: str | None = None
    #: Shared mode: several server processes on one database share games, seeks and challenges (the
    #: move log is the truth, every change is version-checked in the database and announced on the
    #: bus; DESIGN.md "Several processes"). On with ``redis_url``; tests turn it on with one
    #: :class:`~xiangqi.online.bus.LocalBus` (``bus``) given to two services.
    shared: bool = False
    bus: EventBus | None = None
    #: Shared mode: seconds between a process's heartbeats, and after which a silent process counts
    #: as gone (its sockets' presence is dropped, its seeks withdrawn, its games re-read). Long enough
    #: that an overloaded process is not taken for dead (the bench at 1,000 players stalled event
    #: loops for over 5 s on this machine, and every false "gone" re-reads every room).
    heartbeat_s: float = 2.0
    process_ttl_s: float = 15.0
    #: Shared mode: seconds between the sweeps for a dead process's unfinished work
    #: (:meth:`OnlineService.sweep`), how old an unrated end must be before a sweep rates it (the
    #: process that ends a game rates it at once), and the first wait before a failed database step
    #: of the sweep or of a process's departure is tried again (doubling, :data:`DB_RETRIES` tries).
    #: The Redis that counts the abuse limits of every process (:mod:`xiangqi.online.limits`):
    #: ``redis_url`` unless given; None counts them in this process only (the embedded mode).
    limits_url: str | None = None
    sweep_s: float = 10.0
    settle_after_s: float = 5.0
    retry_s: float = 0.5
    #: Where the games' clocks, the grace periods of players who left and the sweep's clock checks
    #: read the time (:class:`~xiangqi.app.play.clock.TimeSource`; tests pass one they advance by hand).
    #: A process's own liveness (heartbeats, the bus's silence, other processes' TTL) is measured on
    #: the machine's clock: it is about real event loops and sockets, not about the games.
    time_source: TimeSource = REAL_TIME
    #: Seconds an export claim (``exported_at``) holds before a sweep takes it over: a process that
    #: died between the claim and the write (:meth:`OnlineStore.claim_export`). Far longer than one
    #: games-database write (well under a second); a second write of a game is harmless.
    export_lease_s: float = 120.0

    def __post_init__(self) -> None:
        if self.redis_url:
            self.shared = True
            if self.limits_url is None:
                self.limits_url = self.redis_url


class RoomStale(StorageError):
    """Shared mode: another process changed the game since this process's copy (the version check of
    :meth:`OnlineStore.save_checked` failed). The room has been re-read from the store; the action
    is tried again (:meth:`OnlineRoom.act`)."""

    status = 409
    kind = "stale"


class RoomStore:
    """What :class:`GameHub` needs of a store, for one online game: each save brings the online move
    log in line with the session (:meth:`OnlineStore.save_moves`, one transaction); a database
    failure becomes :class:`StorageError` (the change is then undone, as in the local game). In shared
    mode the save writes into the room's version-checked transaction, with the room's offers and
    result (:meth:`OnlineRoom.row_values`)."""

    notices: list[dict[str, Any]] = []

    def __init__(self, db: OnlineStore, session: GameSession, saved: list[str]) -> None:
        self.db = db
        self.session = session
        self.saved = list(saved)
        self.room: OnlineRoom | None = None

    def load_current(self) -> GameSession:
        """The room's session (GameHub's constructor asks)."""
        return self.session

    def get_settings(self) -> dict[str, Any]:
        """No per-user settings here: the computer's tendency is ``normal``, the language ``zh``."""
        return {}

    def save_game(self, session: GameSession, language: str, abandoned: Any = None) -> None:
        """Write the move log and the clock of ``session``."""
        moves = session.iccs_moves()
        room = self.room
        if room is not None and room._pending is not None:  # shared: stored when the lock is released
            room._pending.moves, room._pending.clock = moves, clock_record(session)
            return
        try:
            self.db.save_moves(session.id, self.saved, moves, clock_record(session))
        except sa.exc.SQLAlchemyError as exc:
            if is_outage(exc):
                raise DatabaseUnavailable() from exc
            raise StorageError(f"the online game could not be saved: {exc}") from exc
        self.saved = moves


def _first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (a driver's error without SQLAlchemy's statement dump)."""
    orig = getattr(exc, "orig", None) or exc
    return (str(orig).strip().splitlines() or [type(orig).__name__])[0][:200]


def clock_record(session: GameSession) -> dict[str, Any]:
    """The clock's record for the store (:meth:`GameClock.to_record`: the running side's time so far
    charged) plus ``saved_at``, the wall time (Unix seconds) of that charge: a process that takes
    the game up charges the running side from then (shared mode)."""
    rec = session.clock.to_record()
    rec["saved_at"] = session.clock.source.wall()
    return rec


def restart_clock(session: GameSession, rec: dict[str, Any] | None) -> None:
    """Set ``session``'s clock from a stored record, running for the side to move since the
    record's ``saved_at`` (so the time since the last stored change is charged, as if one process
    had kept the game; wall clocks of the machines are assumed in step, NTP). The new clock reads
    the time where the old one did (its :class:`~xiangqi.app.play.clock.TimeSource`)."""
    if not rec:
        return
    source = session.clock.source
    session.clock = GameClock.from_record(rec, source)
    if not session.is_over:
        session.clock.start(session.board.turn)
        at = rec.get("saved_at")
        if isinstance(at, (int, float)):
            session.clock.started = source.monotonic() - max(0.0, source.wall() - float(at))


#: State keys an update leaves out: ``version`` is the message's own, ``moves`` goes as a tail.
_NOT_CHANGES = frozenset({"version", "moves"})


def state_update(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The ``update`` message that turns GameState ``old`` (the last one sent) into ``new``
    (docs/ONLINE_API.md section 5): ``{"type": "update", "base": old version, "version": new version,
    "changes": {key: value}}`` with every top-level key whose value differs (a key ``new`` lacks is
    sent as None), and, when the move list changed, ``"moves_from": k, "moves_add": [...]`` (the
    moves after the first ``k``, which both lists share: one move after a move, none and a shorter
    ``k`` after a takeback). :func:`apply_update` is the inverse."""
    changes = {k: v for k, v in new.items() if k not in _NOT_CHANGES and (k not in old or old[k] != v)}
    for k in old:
        if k not in new and k not in _NOT_CHANGES:
            changes[k] = None
    msg: dict[str, Any] = {"type": "update", "base": old["version"], "version": new["version"],
                           "changes": changes}
    om, nm = old["moves"], new["moves"]
    if om is not nm:
        k = common_prefix(om, nm)  # (C speed for a move: a session's entries are kept by identity)
        if k != len(om) or k != len(nm):
            msg["moves_from"] = k
            msg["moves_add"] = nm[k:]
    return msg


def apply_update(state: dict[str, Any] | None, msg: dict[str, Any]) -> dict[str, Any] | None:
    """The GameState after ``update`` message ``msg`` (:func:`state_update`) on ``state`` (not
    changed): ``state`` itself when it is already at the update's version or later (a page that
    got the whole state when it connected, then the update to that same version), None when ``msg``
    does not follow on from it (its ``base`` is not ``state``'s version: a message was missed; the
    page asks for the whole state, ``{"type": "state"}``). What the page (``onlinegame.js``), the
    bench and the tests do with an update."""
    if state is not None and msg.get("version", -1) <= state.get("version", -1):
        return state
    if state is None or msg.get("base") != state.get("version"):
        return None
    new = {**state, **msg["changes"], "version": msg["version"]}
    if "moves_from" in msg:
        new["moves"] = list(state["moves"][:msg["moves_from"]]) + list(msg["moves_add"])
    return new


#: Refusals of an action that a copy of the room behind the store could cause (shared mode,
#: :meth:`OnlineRoom.act`).
_STALE_COPY_CODES = frozenset({"not_your_turn", "stale_version", "game_over", "bad_move", "conflict"})


def _opp(color: Color) -> Color:
    return not color


def _cname(color: Color) -> str:
    return "red" if color == RED else "black"


class OnlineRoom(GameHub):
    """One online game (see the module text). ``seats``: ``{RED: Identity, BLACK: Identity}``."""

    def __init__(self, service: OnlineService, session: GameSession, seats: dict[Color, Identity],
                 preset: Preset, rated: bool, saved: list[str], *, status: str = "playing",
                 move_provider: MoveProvider | None = None) -> None:
        player = None
        if any(i.kind == "engine" for i in seats.values()) and move_provider is None:
            from xiangqi.app.opponents.players import DEFAULT_BOOK, EnginePlayer

            player = EnginePlayer(hash_mb=16, book=DEFAULT_BOOK)
        super().__init__(RoomStore(service.db, session, saved), player=player, move_provider=move_provider,
                         engine_delay_s=service.config.engine_delay_s)
        self.store.room = self
        self.service = service
        self.seats = seats
        self.preset = preset
        self.rated = rated
        self.status = status
        self.channel = f"game:{session.id}"
        self.offers: dict[str, Color | None] = {"draw": None, "takeback": None}
        self.conns: dict[Color, int] = {RED: 0, BLACK: 0}
        self.left_at: dict[Color, float | None] = {RED: None, BLACK: None}
        self.watchers = 0
        self.rtt: dict[Color, list[float]] = {RED: [], BLACK: []}
        self.abandoned: Color | None = None  # the side that left and lost by the opponent's claim
        self.rating_change: dict[str, Any] | None = None
        self.db_id: int | None = None
        self._finished = status != "playing"
        self._claim_tasks: dict[Color, asyncio.Task[None]] = {}
        self._ratings: dict[Color, dict[str, Any] | None] = {}
        #: The address a computer game was started from (its per-address limit), None when not known
        #: (a game taken up again after a restart).
        self.started_from: str | None = None
        self._position_key: tuple[str, int] | None = None
        #: The state version at which the current position began (see :attr:`version`).
        self.position_since = 0
        # shared mode: the stored revision this copy shows, this process's own sockets (``conns`` and
        # ``watchers`` are the totals over every process), the other processes' counts by process id,
        # the open version-checked transaction of a change and what its save wrote
        self.revision = 0
        self.local_conns: dict[Color, int] = {RED: 0, BLACK: 0}
        self.local_watchers = 0
        self.remote: dict[str, tuple[int, int, int]] = {}
        self._wrote: tuple[int, list[str]] | None = None
        self._sync_sub: Any = None
        self._force_write = False
        #: The state of the last broadcast (the base of the next update, :meth:`broadcast`).
        self._sent: dict[str, Any] | None = None
        #: Shared mode: the change made under the lock and not yet stored (:class:`_Pending`), and
        #: the tasks that answer a player (a failed write is raised to them, logged for the others).
        self._pending: _Pending | None = None
        self._answering: set[asyncio.Task[Any]] = set()
        if service.shared:
            self._sync_sub = service.bus.subscribe(f"sync:{session.id}", self._on_bus)
            self._lock = _WritingLock(self)  # type: ignore[assignment]

    # -- identity ----------------------------------------------------------------------------------

    def seat_of(self, who: Identity | None) -> Color | None:
        """The colour ``who`` plays here, or None (a spectator)."""
        if who is None:
            return None
        for color, ident in self.seats.items():
            if ident.kind != "engine" and ident.id == who.id:
                return color
        return None

    def _seat(self, who: Identity | None) -> Color:
        color = self.seat_of(who)
        if color is None:
            raise OnlineError("you do not play in this game", 403, "not_your_seat")
        return color

    def _playing(self) -> None:
        if self.status != "playing" or self.session.is_over:
            raise OnlineError("the game is over", 409, "game_over")

    # -- the state ---------------------------------------------------------------------------------

    def _grace(self) -> float:
        c = self.service.config
        return c.bullet_grace_s if self.preset.category == "bullet" else c.grace_s

    def claim_view(self) -> dict[str, Any] | None:
        """``{"by", "after_ms"}`` while a seated player's sockets are all gone (the other may claim)."""
        if self.status != "playing" or self.session.is_over or not self.service.presence_known():
            return None
        for color in (RED, BLACK):
            t = self.left_at[color]
            if t is not None and self.seats[_opp(color)].kind != "engine":
                left = max(0.0, t + self._grace() - self.service.time.monotonic())
                return {"by": _cname(_opp(color)), "after_ms": int(left * 1000)}
        return None

    def can_abort(self) -> bool:
        """While the game goes on and a side has made fewer than two moves (:data:`ABORT_PLIES`)."""
        return (self.status == "playing" and not self.session.is_over
                and len(self.session.moves) < ABORT_PLIES)

    def _aborts(self) -> bool:
        """Whether the game that just ended ends as aborted: a game of two players (a computer game,
        never rated, keeps its result) before :data:`ABORT_PLIES` plies, by a resignation, a
        time-out, an agreement or a claim (not by the board)."""
        out = self.session.outcome
        return (len(self.session.moves) < ABORT_PLIES and out is not None
                and out.termination in _ABORTABLE_ENDS
                and all(i.kind != "engine" for i in self.seats.values()))

    @property
    def version(self) -> int:
        """:attr:`GameHub.version`; also notes the version at which the current position began
        (:attr:`position_since`), so that a move sent from a state that differs only in presence,
        watchers or offers is not refused as stale."""
        v = GameHub.version.fget(self)  # type: ignore[attr-defined]
        key = (self.session.id, self.session.version)
        if key != self._position_key:
            self._position_key = key
            self.position_since = v
        return v

    def _version_extra(self) -> tuple[Any, ...]:
        claim = self.claim_view()
        return (self.status, self.offers["draw"], self.offers["takeback"], self.present(RED),
                self.present(BLACK), None if claim is None else claim["after_ms"] == 0,
                self.watchers, self.rating_change is not None, self.db_id)

    def seat_view(self, color: Color) -> dict[str, Any]:
        """The contract's Seat (the ratings are read once and again after the game: they change only
        when a game ends)."""
        ident = self.seats[color]
        connected = self.present(color)
        if color not in self._ratings:
            if self.service.shared:  # read off the event loop (load_ratings), before the next broadcast
                return {"user": ident.view(), "connected": connected, "rating": None}
            rating = None
            if ident.user_id is not None:  # embedded: one indexed SQLite read, once per game and seat
                r, games = self.service.db.rating(ident.user_id, self.preset.category)
                rating = rating_view(self.preset.category, r, games)
            self._ratings[color] = rating
        return {"user": ident.view(), "connected": connected, "rating": self._ratings[color]}

    def present(self, color: Color) -> bool:
        """Whether ``color``'s player counts as connected: a computer always; a person with a socket
        on any process — or whenever this process cannot know (shared mode, the bus silent:
        :meth:`OnlineService.presence_known`), since a Redis outage says nothing about the sockets
        of the other processes. Unknown counts as present: nobody is shown as gone, nor may be
        claimed against, because a message did not arrive."""
        return (self.seats[color].kind == "engine" or self.conns[color] > 0
                or not self.service.presence_known())

    async def load_ratings(self) -> None:
        """Shared mode: read the seats' ratings this copy does not know yet (a new room, or a game
        just rated) in worker threads (:meth:`OnlineService.run_db`), for :meth:`seat_view`; the room
        look-up (:meth:`OnlineService.room_async`) and :meth:`broadcast` call it."""
        for color in (RED, BLACK):
            if color in self._ratings:
                continue
            ident = self.seats[color]
            rating = None
            if ident.user_id is not None:
                try:
                    r, games = await self.service.run_db(self.service.db.rating, ident.user_id,
                                                         self.preset.category)
                except sa.exc.SQLAlchemyError as exc:  # the database is away: the seat shows no
                    if not is_outage(exc):             # rating now, the next broadcast reads it
                        raise
                    return
                rating = rating_view(self.preset.category, r, games)
            self._ratings.setdefault(color, rating)

    def state(self) -> dict[str, Any]:
        """The contract's GameState (docs/ONLINE_API.md section 5). Shared mode, while a change is
        being stored: the state last sent (nothing that is not stored is shown)."""
        if self._pending is not None and self._sent is not None:
            return self._sent
        st = self.session.state()
        st.pop("storage_notices", None)
        st["version"] = self.version
        st["status"] = self.status
        st["thinking"] = self.thinking
        st["engine_error"] = self._failure()
        if self.status == "aborted":
            st["result"] = dict(_ABORTED_RESULT)
            out = self.session.outcome
            if out is not None and _NO_FIRST_MOVE_EN in out.reason_en:
                st["result"].update(reason_zh=out.reason_zh, reason_en=out.reason_en,
                                    why_zh="一方未在时限内走出第一步：不计结果、不计等级分",
                                    why_en="a side did not make its first move in time: no result, no "
                                           "rating change")
        elif st.get("result") and self.abandoned is not None:
            st["result"] = {**st["result"], "termination": "abandoned"}
        if st.get("clock") is not None:
            st["clock"]["server_time_ms"] = int(time.time() * 1000)
        # the side to move's time for its first move (ms, from the games' time source), or None
        playing = self.status == "playing" and not self.session.is_over
        st["first_move_ms"] = self.session.clock.first_move_left_ms() if playing else None
        st["seats"] = {"red": self.seat_view(RED), "black": self.seat_view(BLACK)}
        st["time_control"] = self.preset.key
        st["category"] = self.preset.category
        st["rated"] = self.rated
        st["offers"] = {k: None if v is None else _cname(v) for k, v in self.offers.items()}
        st["can_abort"] = self.can_abort()
        st["claim"] = self.claim_view()
        st["watchers"] = self.watchers
        st["rating_change"] = self.rating_change
        st["db_id"] = self.db_id
        st.pop("can_undo", None)
        return st

    def summary(self) -> dict[str, Any]:
        """The contract's GameSummary."""
        out = self.session.outcome
        result = None
        if self.status == "finished" and out is not None:
            result = "1-0" if out.winner == RED else "0-1" if out.winner == BLACK else "1/2-1/2"
        term = None
        if self.status == "aborted":
            term = "aborted"
        elif out is not None:
            term = "abandoned" if self.abandoned is not None else out.termination.value
        return {"id": self.session.id, "red": self.seats[RED].view(), "black": self.seats[BLACK].view(),
                "time_control": self.preset.key, "category": self.preset.category, "rated": self.rated,
                "status": self.status, "result": result, "termination": term,
                "plies": len(self.session.moves),
                "watchers": self.watchers, "db_id": self.db_id}

    # -- sending -----------------------------------------------------------------------------------

    def send_all(self, msg: dict[str, Any]) -> None:
        """Publish ``msg`` on the game's bus channel (every socket of the game, on any process). In
        shared mode each process sends to its own sockets (:attr:`clients`), from its own copy."""
        if self.service.shared:
            GameHub.send_all(self, msg)
        else:
            self.service.bus.publish(self.channel, msg)

    async def broadcast(self, extra: dict[str, Any] | None = None) -> None:
        """What changed since the last broadcast, to every socket of the game (through the bus): an
        ``update`` message (:func:`state_update`) built and encoded to JSON once for all the sockets;
        the first broadcast of a room (or one with ``extra`` keys) is a whole ``state``. Nothing is
        sent when the version did not change (nothing a page shows changed but the running clock,
        which the page counts down itself). A socket gets the whole state when it connects and when
        it asks (``{"type": "state"}``), so every page starts from a state the updates follow on."""
        if len(self._ratings) < 2 and self.service.shared:  # a new room or a game just rated
            await self.load_ratings()
        st = self.state()
        sent = self._sent
        if extra or sent is None or sent["id"] != st["id"]:
            msg = Encoded(type="state", state=st)
            if extra:
                msg.update(extra)
        elif st["version"] == sent["version"]:
            return
        else:
            msg = Encoded(state_update(sent, st))
        self._sent = st
        self.send_all(msg)

    def event(self, name: str, by: Color, relay: bool = True) -> None:
        """``{"type": "event", "event": name, "by": colour}`` to every socket of the game (shared mode:
        ``relay`` it to the other processes' sockets too; presence events are not relayed, every
        process sees the presence change itself)."""
        msg = {"type": "event", "event": name, "by": _cname(by)}
        self.send_all(msg)
        if relay and self.service.shared:
            self.service.bus.publish(f"sync:{self.session.id}",
                                     {"type": "relay", "proc": self.service.proc, "msg": msg})

    # -- presence ----------------------------------------------------------------------------------

    def connect(self, who: Identity | None) -> Color | None:
        """A socket of ``who`` opened; returns its seat (None: a spectator, counted in ``watchers``)."""
        color = self.seat_of(who)
        if color is None:
            self.local_watchers += 1
        else:
            self.local_conns[color] += 1
        self._presence_changed()
        if self.service.shared and color is not None:  # a computer game goes on where its player is
            with contextlib.suppress(RuntimeError):
                self.kick_engine()
        return color

    def disconnect(self, who: Identity | None, color: Color | None) -> None:
        """That socket closed; a seat's last one starts the grace period (the clock keeps running)."""
        if color is None:
            self.local_watchers = max(0, self.local_watchers - 1)
        else:
            self.local_conns[color] = max(0, self.local_conns[color] - 1)
        self._presence_changed()

    def _presence_changed(self) -> None:
        if self.service.shared:
            self.service.bus.publish(f"sync:{self.session.id}", self._presence_msg())
        self.recount()

    def _presence_msg(self) -> dict[str, Any]:
        return {"type": "presence", "proc": self.service.proc,
                "c": [self.local_conns[RED], self.local_conns[BLACK], self.local_watchers]}

    def recount(self) -> bool:
        """The totals of sockets (this process's and the others'): a seat whose last socket went
        starts its grace period (``opponent_left``), one that came back clears it (``opponent_back``).
        True when a total changed."""
        totals = {RED: self.local_conns[RED], BLACK: self.local_conns[BLACK]}
        watchers = self.local_watchers
        for r, b, w in self.remote.values():
            totals[RED] += r
            totals[BLACK] += b
            watchers += w
        changed = totals != self.conns or watchers != self.watchers
        old, self.conns, self.watchers = self.conns, totals, watchers
        for color in (RED, BLACK):
            if totals[color] > 0 and (old[color] == 0 or self.left_at[color] is not None):
                task = self._claim_tasks.pop(color, None)
                if task is not None:
                    task.cancel()
                if self.left_at[color] is not None:
                    self.left_at[color] = None
                    self.event("opponent_back", color, relay=False)
            elif (totals[color] == 0 and old[color] > 0 and self.status == "playing"
                  and not self.session.is_over):
                self.left_at[color] = self.service.time.monotonic()
                self.event("opponent_left", color, relay=False)
                with contextlib.suppress(RuntimeError):
                    self._claim_tasks[color] = asyncio.get_running_loop().create_task(
                        self._claim_open(color))
        return changed

    async def _claim_open(self, color: Color) -> None:
        await asyncio.sleep(self._grace() + 0.01)
        if self.left_at[color] is not None:
            await self.broadcast()  # the claim is open now: the opponent's page shows the button

    def note_rtt(self, color: Color, rtt_s: float) -> None:
        """A round trip measured on ``color``'s socket (seconds)."""
        samples = self.rtt[color]
        samples.append(max(0.0, rtt_s))
        del samples[:-RTT_SAMPLES]

    def lag_credit(self, color: Color) -> float:
        """Seconds credited back on ``color``'s move: half the median round trip, at most
        :data:`LAG_CAP_S`."""
        samples = self.rtt[color]
        return 0.0 if not samples else min(LAG_CAP_S, statistics.median(samples) / 2)

    # -- actions -----------------------------------------------------------------------------------

    async def act(self, who: Identity | None, kind: str, msg: dict[str, Any]) -> None:
        """Do what a player asked (``kind`` of docs/ONLINE_API.md section 6); raises :class:`OnlineError`
        (or a core error for a bad move) when refused. The state goes out on the bus."""
        handler = {"move": self._move, "resign": self._resign, "abort": self._abort, "claim": self._claim,
                   "draw_offer": self._draw_offer, "draw_accept": self._draw_accept,
                   "draw_decline": self._draw_decline, "takeback_request": self._takeback_request,
                   "takeback_accept": self._takeback_accept,
                   "takeback_decline": self._takeback_decline}.get(kind)
        if handler is None:
            raise OnlineError(f"unknown action {kind!r}", 400, "bad_request")
        color = self._seat(who)
        what = f"your {kind.replace('_', ' ')} was not made"
        try:
            await self._act(handler, color, msg)
        except DatabaseUnavailable as exc:
            raise DatabaseUnavailable(what, exc.retry_after) from exc
        except Exception as exc:  # a read of the action (the revision, a re-read) met an outage
            if not is_outage(exc):
                raise
            self.service.db_trouble(self, exc)
            raise DatabaseUnavailable(what) from exc

    async def _act(self, handler: Any, color: Color, msg: dict[str, Any]) -> None:
        if not self.service.shared:
            await handler(color, msg)
            return
        # Shared mode: the action is judged on this process's copy, kept current by the bus; the
        # version check of the write (_saving) refuses a change made on a stale copy (RoomStale: the
        # room was re-read, the action is tried again). A refusal that a stale copy could cause
        # (not your turn, an unknown move …) is checked against the stored revision once (one
        # SELECT, only then) and tried again on the re-read game.
        checked = False
        task = asyncio.current_task()
        if task is not None:
            self._answering.add(task)
        try:
            for _ in range(4):  # refused only when other processes keep changing the game
                seen = self.revision
                try:
                    await handler(color, msg)
                except RoomStale:
                    continue
                except OnlineError as exc:
                    if checked or exc.code not in _STALE_COPY_CODES or not await self.refresh_async(seen):
                        raise
                    checked = True
                    continue
                return
        finally:
            self._answering.discard(task)  # type: ignore[arg-type]
        raise OnlineError("the game changed on another server meanwhile: try again", 409, "conflict")

    async def _move(self, color: Color, msg: dict[str, Any]) -> None:
        iccs = msg.get("move")
        if not isinstance(iccs, str) or not 4 <= len(iccs) <= 6:
            raise OnlineError("a move needs 'move' in ICCS, e.g. h2e2", 400, "bad_move")
        version = msg.get("version")
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise OnlineError("'version' must be an integer", 400, "bad_request")
        async with self._lock:
            self._playing()
            s = self.session
            if s.board.turn != color:
                raise OnlineError("it is not your turn", 409, "not_your_turn")
            current = self.version
            if version is not None and not self.position_since <= version <= current:
                raise OnlineError(f"the position changed since version {version} (now {current})", 409,
                                  "stale_version")
            now = s.clock.now()
            if s.clock.running is not None:
                now = max(s.clock.started, now - self.lag_credit(color))
            try:
                with self._saving():
                    s.play(iccs, now=now)
                    if self.offers["draw"] == _opp(color):
                        self.offers["draw"] = None  # moving declines the opponent's offer
                    self.offers["takeback"] = None
            except StorageError:
                raise
            except XiangqiError as exc:
                raise OnlineError(str(exc), 400, "bad_move") from None
        await self.broadcast()
        self.kick_engine()

    async def _resign(self, color: Color, _msg: dict[str, Any]) -> None:
        async with self._lock:
            self._playing()
            self.player.stop()
            with self._saving():
                self.session.resign(color)
        await self.broadcast()

    async def _abort(self, color: Color, _msg: dict[str, Any]) -> None:
        async with self._lock:
            self._playing()
            if not self.can_abort():
                raise OnlineError("a game can be aborted only before each side has made two moves", 409,
                                  "conflict")
            self.player.stop()
            self.status = "aborted"
            with self._saving():
                self.session.declare(draw(Termination.AGREEMENT, "对局已取消", "game aborted"))
        await self.broadcast()

    async def _claim(self, color: Color, _msg: dict[str, Any]) -> None:
        async with self._lock:
            self._playing()
            if not self.service.presence_known():
                raise OnlineError("the servers cannot tell now whether your opponent is connected (their "
                                  f"message bus is unreachable): try again in {RETRY_AFTER_S} s", 503,
                                  "presence_unknown", retry_after=RETRY_AFTER_S)
            claim = self.claim_view()
            if claim is None or claim["by"] != _cname(color):
                raise OnlineError("your opponent is connected: there is nothing to claim", 409, "conflict")
            if claim["after_ms"] > 0:
                raise OnlineError(f"wait {claim['after_ms'] / 1000:.1f} s more before claiming", 409,
                                  "conflict")
            gone = _opp(color)
            self.abandoned = gone
            with self._saving():
                self.session.declare(win(Termination.RESIGNATION, color, f"{SIDE_ZH[gone]}离开对局",
                                         f"{SIDE_EN[gone]} left the game"))
        await self.broadcast()

    async def _draw_offer(self, color: Color, _msg: dict[str, Any]) -> None:
        self._playing()
        if self.seats[_opp(color)].kind == "engine":
            await self.offer_draw()  # the computer judges it (GameHub.offer_draw)
            return
        async with self._lock:
            self._playing()
            if self.offers["draw"] == _opp(color):  # both offered: agreed
                self.offers["draw"] = None
                with self._saving():
                    self.session.agree_draw()
                agreed = True
            else:
                with self._saving():
                    self.offers["draw"] = color
                agreed = False
        await self.broadcast()
        if not agreed:
            self.event("draw_offered", color)

    async def _draw_accept(self, color: Color, _msg: dict[str, Any]) -> None:
        async with self._lock:
            self._playing()
            if self.offers["draw"] != _opp(color):
                raise OnlineError("there is no draw offer from your opponent", 409, "conflict")
            self.offers["draw"] = None
            with self._saving():
                self.session.agree_draw()
        await self.broadcast()

    async def _draw_decline(self, color: Color, _msg: dict[str, Any]) -> None:
        await self._decline(color, "draw", "there is no draw offer from your opponent")

    async def _decline(self, color: Color, kind: str, missing: str) -> None:
        """``color`` declines the opponent's pending ``kind`` offer (``draw`` or ``takeback``): the
        offer is cleared and saved, the room broadcast, and the event ``<kind>_declined`` sent.
        Raises :class:`OnlineError` 409 ``conflict`` with the message ``missing`` when the opponent
        has no such offer pending."""
        async with self._lock:
            if self.offers[kind] != _opp(color):
                raise OnlineError(missing, 409, "conflict")
            with self._saving():
                self.offers[kind] = None
        await self.broadcast()
        self.event(f"{kind}_declined", color)

    def _plies_back(self, requester: Color) -> int:
        """Plies a takeback for ``requester`` removes: its last move, and the reply after it."""
        s = self.session
        n = len(s.moves)
        if n == 0:
            return 0
        last_by = _opp(s.board.turn)  # the side that made the last move
        if last_by == requester:
            return 1
        return 2 if n >= 2 else 0

    async def _takeback_request(self, color: Color, _msg: dict[str, Any]) -> None:
        async with self._lock:
            self._playing()
            if self._plies_back(color) == 0:
                raise OnlineError("you have no move to take back", 409, "conflict")
            if self.seats[_opp(color)].kind == "engine":  # the computer always agrees (a casual game)
                self.player.stop()
                with self._saving():
                    self.session.undo()
                self.thinking = False
                self.engine_error = None
                granted = True
            else:
                with self._saving():
                    self.offers["takeback"] = color
                granted = False
        await self.broadcast()
        if granted:
            self.kick_engine()
        else:
            self.event("takeback_requested", color)

    async def _takeback_accept(self, color: Color, _msg: dict[str, Any]) -> None:
        async with self._lock:
            self._playing()
            requester = self.offers["takeback"]
            if requester != _opp(color):
                raise OnlineError("there is no takeback request from your opponent", 409, "conflict")
            n = self._plies_back(requester)
            self.offers["takeback"] = None
            self.offers["draw"] = None
            with self._saving():
                for _ in range(n):
                    self.session.undo()
        await self.broadcast()

    async def _takeback_decline(self, color: Color, _msg: dict[str, Any]) -> None:
        await self._decline(color, "takeback", "there is no takeback request from your opponent")

    # -- several processes (shared mode) -------------------------------------------------------------

    def _shared_key(self) -> tuple[Any, ...]:
        return (self.status, self.offers["draw"], self.offers["takeback"], self.abandoned,
                json.dumps(self.rating_change, sort_keys=True), self.db_id)

    def row_values(self) -> dict[str, Any]:
        """The columns of the game's row a shared save writes besides the moves and the clock: status,
        result, termination and reasons (as :meth:`OnlineService.finished` stores them), the offers,
        the rating change and ``db_id`` — so that another process rebuilds exactly this room."""
        out = self.session.outcome
        status = "aborted" if self.status == "aborted" else "finished" if self.session.is_over else "playing"
        result = None
        if status == "finished" and out is not None:
            result = "1-0" if out.winner == RED else "0-1" if out.winner == BLACK else "1/2-1/2"
        termination = None
        if status == "aborted":
            termination = "aborted"
        elif status == "finished" and out is not None:
            termination = "abandoned" if self.abandoned is not None else out.termination.value
        return {"status": status, "result": result, "termination": termination,
                "reason_zh": None if out is None else out.reason_zh[:80],
                "reason_en": None if out is None else out.reason_en[:120],
                "offers": json.dumps({k: None if v is None else _cname(v) for k, v in self.offers.items()}),
                "rating_change": None if self.rating_change is None else json.dumps(self.rating_change),
                "db_id": self.db_id}

    @contextlib.contextmanager
    def _saving(self) -> Iterator[None]:
        """:meth:`GameHub._saving`; in shared mode the change is made in memory here and stored when
        the room's lock is released (:class:`_WritingLock`, :meth:`_store_pending`): in a worker
        thread, version-checked in the row's ``UPDATE`` (:meth:`OnlineStore.save_checked`), before
        anything is broadcast or answered. Several changes under one lock are stored as one."""
        if not self.service.shared:
            with super()._saving():
                yield
            return
        first = self._pending is None
        if first:
            s = self.session
            self._pending = _Pending(s, s.to_record(), s.version, self._shared_key(), list(self.store.saved),
                                     (self.status, dict(self.offers), self.abandoned, self.rating_change,
                                      self.db_id, self._finished))
        with super()._saving():
            yield

    async def _store_pending(self) -> None:
        """Shared mode, the room's lock about to be released: store the change made under it (if
        any) off the event loop, then announce it. Raises :class:`RoomStale` when another process
        changed the game first (the room is re-read; the action is tried again) and
        :class:`~xiangqi.app.play.store.StorageError` when the database failed (the change is undone in
        memory, as in the local game)."""
        p = self._pending
        if p is None:
            return
        if p.moves is None and not self._force_write and self._shared_key() == p.key:
            self._pending = None  # nothing to store
            return
        moves = p.moves if p.moves is not None else p.saved
        clock = p.clock if p.clock is not None else clock_record(self.session)
        try:
            k = await self.service.run_db(self.service.db.save_checked, self.session.id, self.revision,
                                          p.saved, moves, clock, self.row_values())
        except sa.exc.SQLAlchemyError as exc:
            self._pending = None
            self._undo(p, exc)
            if is_outage(exc):  # one line, no traceback: an outage is reported once per failed change
                log.warning("online game %s: a change was not stored, the database is unreachable (%s)",
                            self.session.id, _first_line(exc))
                self.service.db_trouble(self, exc)
                raise DatabaseUnavailable() from exc
            log.exception("a shared change of online game %s could not be stored", self.session.id)
            raise StorageError(f"the online game could not be saved: {exc}") from exc
        if k is None:  # another process changed the game since this copy: re-read it, try again
            self._pending = None
            self._restore(p)
            with contextlib.suppress(sa.exc.SQLAlchemyError):
                await self.reload_async()
            self.service.spawn(self.broadcast())
            raise RoomStale("the game changed on another server process")
        self._pending = None
        self.store.saved = list(moves)
        self._wrote = (k, moves[k:])
        self.revision += 1
        self._announce()
        if p.finish:
            self.service.spawn(self.service.finished(self))

    def _restore(self, p: _Pending) -> None:
        """The room as it was before the unstored change ``p`` (session, offers, status …)."""
        if self.session is p.session:
            back = self.service.timed(GameSession.from_record(p.record))
            back.version = p.version
        else:
            back = p.session
        self.session = back
        self.store.session = back
        self.store.saved = list(p.saved)
        (self.status, self.offers, self.abandoned, self.rating_change, self.db_id,
         self._finished) = p.fields
        self.offers = dict(self.offers)
        self.arm_clock()

    def _undo(self, p: _Pending, exc: BaseException) -> None:
        """A change that could not be stored: undone in memory, ``storage_error`` set and shown (as
        :meth:`GameHub._commit` does in the local game)."""
        self._restore(p)
        detail = (str(DatabaseUnavailable("the last change was not made")) if is_outage(exc)
                  else f"the online game could not be saved: {exc}")
        self.storage_error = {"kind": "database", "detail": detail}
        self.service.spawn(self.broadcast())

    def _announce(self) -> None:
        """Tell the other processes about revision :attr:`revision` (``sync`` on ``sync:<id>``): the
        plies after the common prefix, the clock, the result and offers; a process whose copy is at
        the revision before applies it, any other re-reads the store."""
        k, new = self._wrote or (len(self.session.moves), [])
        d = self.session.declared
        self.service.bus.publish(f"sync:{self.session.id}", {
            "type": "sync", "proc": self.service.proc, "rev": self.revision, "k": k, "moves": new,
            "clock": clock_record(self.session), "status": self.status,
            "declared": None if d is None else {"termination": d.termination.value, "winner": d.winner,
                                                 "reason_zh": d.reason_zh, "reason_en": d.reason_en},
            "offers": {k2: None if v is None else _cname(v) for k2, v in self.offers.items()},
            "abandoned": None if self.abandoned is None else _cname(self.abandoned),
            "rating_change": self.rating_change, "db_id": self.db_id})

    def refresh(self) -> bool:
        """Shared mode: re-read the game when the store has a newer revision than this copy; True
        when it did (reads on the calling thread; :meth:`refresh_async` off the event loop)."""
        if self.service.shared and self._pending is None:
            rev = self.service.db.revision(self.session.id)
            if rev is not None and rev != self.revision:
                self.reload()
                return True
        return False

    async def refresh_async(self, seen: int | None = None) -> bool:
        """:meth:`refresh` with the reads in a worker thread. True also when this copy is no longer at
        revision ``seen`` (the revision it had when an action was refused): the bus brought the
        change meanwhile."""
        if not self.service.shared:
            return False
        seen = self.revision if seen is None else seen
        if self._pending is None:
            rev = await self.service.run_db(self.service.db.revision, self.session.id)
            if rev is not None and rev != self.revision and self._pending is None:
                await self.reload_async()
        return self.revision != seen

    def _read(self) -> tuple[dict[str, Any] | None, list[str]]:
        row = self.service.db.game(self.session.id)
        return row, ([] if row is None else self.service.db.moves(self.session.id))

    def reload(self) -> None:
        """Re-read the game from the store (row and move log, replayed through the core; the clock
        charged since its stored time) in place; the sockets get the new state."""
        self._reload_from(*self._read())

    async def reload_async(self) -> None:
        """:meth:`reload` with the reads in a worker thread (the room is changed on the loop)."""
        self._reload_from(*await self.service.run_db(self._read))

    def _reload_from(self, row: dict[str, Any] | None, moves: list[str]) -> None:
        if row is None:
            return
        old = self.session
        session, _, _ = self.service.session_from(row, moves)
        same_position = old.iccs_moves() == moves and (old.declared is None) == (
            session.declared is None)
        self.session = session
        self.store.session = session
        self.store.saved = list(moves)
        if same_position:  # a move sent from the state shown is not stale for a re-read alone
            self._position_key = (session.id, session.version)
        self._take_row(row)
        self._after_sync()

    def _take_row(self, row: dict[str, Any]) -> None:
        self.revision = int(row.get("revision") or 0)
        if row["status"] == "aborted":
            self.status = "aborted"
        elif row["status"] == "finished" or self.session.is_over:
            self.status = "finished"
        offers = row.get("offers") or {}
        self.offers = {k: None if offers.get(k) is None else (RED if offers[k] == "red" else BLACK)
                       for k in ("draw", "takeback")}
        self.abandoned = None
        if row.get("termination") == "abandoned":
            self.abandoned = BLACK if row.get("result") == "1-0" else RED
        if row.get("rating_change") != self.rating_change:
            self._ratings.clear()
        self.rating_change = row.get("rating_change")
        self.db_id = row.get("db_id")

    def _after_sync(self) -> None:
        if self.status != "playing" or self.session.is_over:
            if self.status == "playing":
                self.status = "aborted" if self._aborts() else "finished"
            self._finished = True
            for task in self._claim_tasks.values():
                task.cancel()
            self._claim_tasks.clear()
            for color in (RED, BLACK):
                self.left_at[color] = None
        self.arm_clock()

    def _on_bus(self, msg: dict[str, Any]) -> None:
        if msg.get("proc") == self.service.proc:
            return
        kind = msg.get("type")
        if kind == "presence":
            self.service.seen(msg["proc"])
            r, b, w = (int(x) for x in msg["c"])
            if (r, b, w) == (0, 0, 0):
                self.remote.pop(msg["proc"], None)
            else:
                self.remote[msg["proc"]] = (r, b, w)
            if self.recount():
                self.service.spawn(self.broadcast())
        elif kind == "presence_query":  # (zeros too: an asker may hold a count of ours that is stale)
            self.service.bus.publish(f"sync:{self.session.id}", self._presence_msg())
        elif kind in ("sync", "relay", "changed"):
            self.service.spawn(self._take_sync(msg))

    async def _take_sync(self, msg: dict[str, Any]) -> None:
        """Apply another process's change (in bus order, under the lock) and show it to this
        process's sockets."""
        try:
            async with self._lock:
                if msg["type"] == "relay":
                    GameHub.send_all(self, msg["msg"])
                    return
                if msg["rev"] <= self.revision:
                    return
                if (msg["type"] == "changed" or msg["rev"] != self.revision + 1
                        or msg["k"] != len(self.session.moves)):
                    await self.reload_async()  # a gap (a message missed, a takeback): the store has it all
                else:
                    try:
                        self._apply(msg)
                    except (XiangqiError, KeyError, TypeError, ValueError):
                        log.exception("online game %s: a change from another process did not apply",
                                      self.session.id)
                        await self.reload_async()
        except sa.exc.SQLAlchemyError as exc:  # the re-read met an outage: done when the database is back
            if not is_outage(exc):
                raise
            self.service.db_trouble(self, exc)
            return
        await self.broadcast()

    def _apply(self, msg: dict[str, Any]) -> None:

        s = self.session
        for iccs in msg["moves"]:
            s.play(iccs, clocked=False)
        d = msg.get("declared")
        if d and s.declared is None:
            s.declared = Outcome(Termination(d["termination"]), d["winner"], d["reason_zh"], d["reason_en"])
            s._touch()
        restart_clock(s, msg["clock"])
        self.store.saved = s.iccs_moves()
        self.revision = msg["rev"]
        self.status = msg["status"]
        self.offers = {k: None if v is None else (RED if v == "red" else BLACK)
                       for k, v in msg["offers"].items()}
        ab = msg.get("abandoned")
        self.abandoned = None if ab is None else (RED if ab == "red" else BLACK)
        if msg.get("rating_change") != self.rating_change:
            self._ratings.clear()
        self.rating_change = msg.get("rating_change")
        self.db_id = msg.get("db_id")
        self._after_sync()

    async def shared_update(self) -> None:
        """Shared mode: store and announce what changed outside a move (the rating change, ``db_id``)."""
        if not self.service.shared:
            return
        task = asyncio.current_task()
        if task is not None:
            self._answering.add(task)  # a failed write is raised here
        try:
            for _ in range(4):
                try:
                    async with self._lock:
                        await self.refresh_async()
                        self._force_write = True
                        try:
                            with self._saving():
                                pass
                            await self._store_pending()
                        finally:
                            self._force_write = False
                except RoomStale:
                    continue
                return
        finally:
            self._answering.discard(task)  # type: ignore[arg-type]

    async def shutdown(self) -> None:
        """:meth:`GameHub.shutdown`, and the end of the room's bus subscription."""
        if self._sync_sub is not None:
            self._sync_sub.close()
        await super().shutdown()

    # -- the end -----------------------------------------------------------------------------------

    def _commit(self, old: GameSession, record: dict[str, Any], version: int) -> None:
        try:
            super()._commit(old, record, version)
        except StorageError:
            self.service.timed(self.session)  # (a session restored from its record: our time source)
            raise
        if self.session.is_over and not self._finished:
            self._finished = True
            if self.status == "playing":
                self.status = "aborted" if self._aborts() else "finished"
                if self.status == "aborted":
                    self._no_first_move()
            for task in self._claim_tasks.values():
                task.cancel()
            self._claim_tasks.clear()
            if self._pending is not None:  # shared: once it is stored (_store_pending)
                self._pending.finish = True
            else:
                self.service.spawn(self.service.finished(self))


    def _no_first_move(self) -> None:
        """A game just aborted by a flag before both sides moved: the side to move let its first
        move's time (:data:`FIRST_MOVE_S`) run out (no other clock runs then). Its end says so
        (stored as the game's reason, shown to both players in the state's ``result``)."""
        s = self.session
        out = s.outcome
        limit = s.clock.first_move_s
        if (out is None or out.termination != Termination.TIMEOUT or out.winner is None
                or len(s.moves) >= UNPLAYED_PLIES or limit is None):
            return
        late = _opp(out.winner)
        s.declared = Outcome(Termination.TIMEOUT, None, f"{SIDE_ZH[late]}未在{limit:g}秒内走第一步",
                             f"{SIDE_EN[late]} {_NO_FIRST_MOVE_EN} {limit:g} s")


class _Pending:
    """Shared mode: a change made in memory under the room's lock and not yet stored: the room
    before it (``session``, its ``record`` and ``version``, the row's shared fields ``key``, the
    stored plies ``saved``, the other fields) and what the save step asked to store (``moves``,
    ``clock``); ``finish``: the change ended the game (:meth:`OnlineService.finished` once stored)."""

    __slots__ = ("session", "record", "version", "key", "saved", "fields", "moves", "clock", "finish")

    def __init__(self, session: GameSession, record: dict[str, Any], version: int, key: tuple[Any, ...],
                 saved: list[str], fields: tuple[Any, ...]) -> None:
        self.session, self.record, self.version, self.key = session, record, version, key
        self.saved, self.fields = saved, fields
        self.moves: list[str] | None = None
        self.clock: dict[str, Any] | None = None
        self.finish = False


class _WritingLock:
    """Shared mode: a room's lock (an :class:`asyncio.Lock`) whose release first stores the change
    made under it (:meth:`OnlineRoom._store_pending`, in a worker thread): one game's changes are
    stored one after the other, in order, and each before the next begins, while the event loop
    serves every other game meanwhile. A failed store is raised to the task that answers a player
    (:meth:`OnlineRoom.act`); for the room's own tasks (the clock's watchdog, the computer's move
    loop) it is logged: the room was re-read or undone and its clock re-armed."""

    def __init__(self, room: OnlineRoom) -> None:
        self.room = room
        self._lock = asyncio.Lock()

    def locked(self) -> bool:
        """Whether a task holds the lock."""
        return self._lock.locked()

    async def __aenter__(self) -> None:
        await self._lock.acquire()

    async def __aexit__(self, *exc: Any) -> bool:
        try:
            await self.room._store_pending()
        except StorageError as err:
            if asyncio.current_task() in self.room._answering:
                raise
            log.warning("online game %s: a change was not stored (%s)", self.room.session.id, err)
        finally:
            self._lock.release()
        return False


def _ran_out(row: dict[str, Any], source: TimeSource = REAL_TIME) -> bool:
    """Whether the side to move of a stored ``playing`` game (``row`` with ``plies`` and its clock
    record) has run out of time by now, read from ``source`` (its clock running since the record's
    ``saved_at``; its first move's time too, :data:`FIRST_MOVE_S`; online games start from the
    initial position, Red to move)."""
    rec = row.get("clock")
    at = rec.get("saved_at") if isinstance(rec, dict) else None
    if not isinstance(at, (int, float)):
        return False
    try:
        clk = GameClock.from_record(rec, source)
    except (KeyError, TypeError, ValueError):
        return False
    clk.start(RED if int(row.get("plies") or 0) % 2 == 0 else BLACK)
    clk.started = source.monotonic() - max(0.0, source.wall() - float(at))
    return clk.flagged() is not None


def _rater(result: str) -> Any:
    """The rating step of :meth:`OnlineStore.rate_once` for a game with ``result`` (``1-0``, ``0-1``,
    ``1/2-1/2``): both players' new Glicko-2 ratings and the contract's ``rating_change``."""
    score = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)

    def rate(r_old: Any, b_old: Any) -> tuple[Any, Any, dict[str, Any]]:
        r_new, b_new = rate_game(r_old, b_old, score)
        change = {side: {"before": round(o.rating), "after": round(n.rating),
                         "delta": round(n.rating) - round(o.rating), "rd": round(n.rd)}
                  for side, o, n in (("red", r_old, r_new), ("black", b_old, b_new))}
        return r_new, b_new, change
    return rate


def _same_address(a: str | None, b: str | None) -> str | None:
    """The address two players came from when it is one and known, else None."""
    return a if a is not None and a == b and a != "?" else None


def _sign(secret: bytes, value: str) -> str:
    return hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()[:32]


class OnlineService:
    """The online game service of one server process (module text). ``data_dir``: where the default
    SQLite online database lives; ``games_db``: the app's :class:`~xiangqi.app.library.database.GamesDatabase`
    (finished games are stored there), ``registry``: the server's rooms."""

    def __init__(self, config: OnlineConfig, registry: GameRegistry, *, data_dir: Any = None,
                 games_db: Any = None, bus: EventBus | None = None) -> None:
        self.config = config
        self.registry = registry
        #: Where the games' clocks and the grace periods read the time (:attr:`OnlineConfig.time_source`).
        self.time = config.time_source
        url = config.db_url
        if url is None:
            from pathlib import Path

            from xiangqi.datadir import default_data_dir as default_dir

            base = Path(data_dir) if data_dir is not None else default_dir()
            base.mkdir(parents=True, exist_ok=True)
            url = f"sqlite:///{base / 'online.db'}"
        kw: dict[str, Any] = {}
        if not url.startswith("sqlite"):
            # a connection that died with its server (a restart, a failover) is found and replaced at
            # checkout, so the first request after the database is back is served, not refused
            kw["pool_pre_ping"] = True
            if "psycopg" in url:  # a server that does not answer at all is an outage after 5 s,
                kw["connect_args"] = {"connect_timeout": RETRY_AFTER_S}  # not a request hung for ever
        engine = sa.create_engine(url, **kw)
        if engine.dialect.name == "sqlite":
            from sqlalchemy import event

            @event.listens_for(engine, "connect")
            def _pragmas(conn: Any, _rec: Any) -> None:
                cur = conn.cursor()
                cur.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a committed move survives a crash of the server process (it is in
                # the WAL file); only an OS crash or power cut may lose the last commits. FULL would
                # fsync every move: 11 ms each on this machine, on the event loop (DESIGN.md, "Load").
                cur.execute("PRAGMA synchronous=NORMAL")
                # the checkpoints (and their fsyncs) run in a thread of their own, not in a commit on
                # the event loop (OnlineStore.start_checkpoints)
                cur.execute("PRAGMA wal_autocheckpoint=0")
                cur.execute("PRAGMA foreign_keys=ON")
                cur.execute("PRAGMA busy_timeout=5000")
                cur.close()
        self.engine = engine
        self.accounts = Accounts(engine, hasher=config.hasher)
        self.db = OnlineStore(engine)
        if engine.dialect.name == "sqlite":
            self.db.start_checkpoints()
        self.secret = self.db.secret().encode()
        self.bus = bus or config.bus or LocalBus()
        #: Shared mode (:attr:`OnlineConfig.shared`); this process's id on the bus; the other
        #: processes heard from (id → monotonic time of their last heartbeat or message).
        self.shared = config.shared
        self.proc = uuid.uuid4().hex[:12]
        self._started_at = dt.datetime.now(dt.UTC)  # (an export claimed before it is a dead run's)
        self.procs: dict[str, float] = {}
        #: Shared mode: when this process last heard its own heartbeat back through the bus (the bus
        #: carries messages), and when presence counts again after the bus was silent.
        self._bus_heard = time.monotonic()
        self._presence_from = 0.0
        #: Shared mode: since when this process has been listening without a break: its event loop ran
        #: its heartbeats on time and the bus carried them (:meth:`_note_beat`, :meth:`_heard_self`).
        #: Only silence heard while listening is evidence that another process is gone.
        self._listening_since = time.monotonic()
        self._last_beat = time.monotonic()
        #: The rooms whose last change met a database outage (re-read when it answers: :meth:`_recover`).
        self._unsure: dict[str, OnlineRoom] = {}
        self._recovering = False
        self.presets = {**PRESETS, **config.presets}
        if self.shared:
            from xiangqi.online.lobby import SharedLobby

            self.lobby: Lobby = SharedLobby(self._lobby_changed, seeks_per_minute=config.seeks_per_minute,
                                            presets=self.presets, store=self.db, service=self)
        else:
            self.lobby = Lobby(self._lobby_changed, seeks_per_minute=config.seeks_per_minute,
                               presets=self.presets)
        self.registrations = SlidingWindow(config.registrations_per_hour, 3600.0)
        #: Shared mode with Redis: the open sockets per address counted there (every process's)
        self.redis_sockets: Any = None
        self.redis_limits: Any = None
        if self.shared and config.limits_url:
            from xiangqi.online import limits

            self.redis_limits = limits.RedisLimits(config.limits_url)
            self.accounts.limiter = limits.RedisLoginLimiter(self.redis_limits)
            self.lobby.limiter = limits.RedisWindow(self.redis_limits, "seeks", config.seeks_per_minute, 60.0)
            self.registrations = limits.RedisWindow(self.redis_limits, "register",
                                                    config.registrations_per_hour, 3600.0)
            self.redis_sockets = limits.RedisSockets(self.redis_limits, self.proc,
                                                     lambda: [self.proc, *self.procs])
        self.games_db = games_db
        self.rooms: dict[str, OnlineRoom] = {}
        self.sockets: dict[str, int] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._computers: list[dict[str, Any]] | None = None
        #: Computer games being started (identity id, address): counted with the playing ones, so
        #: that requests sent at once cannot all pass the limits while the first is being stored.
        self._computer_starts: list[tuple[str, str | None]] = []
        self._lobby_due = False  # a lobby view is to go out (_lobby_changed)
        self._lobby_busy = self._lobby_again = False  # shared mode: one view read at a time
        #: Shared mode: the worker threads of the database calls (:meth:`run_db`); as many as the
        #: engine's pool holds connections at most, so a call never waits for a connection.
        self._db_pool: Any = None
        if self.shared:
            from concurrent.futures import ThreadPoolExecutor

            self._db_pool = ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="online-db")

    # -- several processes ---------------------------------------------------------------------------

    async def run_db(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` (a database call): in shared mode in one of the service's worker threads, so
        that a slow query or a lock held on one game's row delays only the task that waits for it,
        never the event loop and every other game of the process; in the embedded mode in place
        (SQLite in WAL mode: a few hundred microseconds, DESIGN.md "Load")."""
        if self._db_pool is None:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self._db_pool, functools.partial(fn, *args))

    async def start_shared(self) -> None:
        """Shared mode, on the server's loop once the bus runs: listen to the other processes'
        heartbeats, load the shared lobby, take up the games being played, and beat."""
        if not self.shared:
            return
        self._bus_heard = time.monotonic()
        self.bus.subscribe("procs", self._on_procs)
        self.lobby.start()  # type: ignore[attr-defined]
        self.spawn(self._heartbeat())
        self.spawn(self._sweeper())

    def seen(self, proc: str) -> None:
        """Another process is alive (a heartbeat or one of its messages)."""
        if proc != self.proc:
            new = proc not in self.procs
            self.procs[proc] = time.monotonic()
            if new:  # a process starts (or was taken for gone): both sides tell their presence again
                for room in list(self.rooms.values()):
                    if any(room.local_conns.values()) or room.local_watchers:
                        self.bus.publish(f"sync:{room.session.id}", room._presence_msg())
                    self.bus.publish(f"sync:{room.session.id}", {"type": "presence_query", "proc": self.proc})

    def _on_procs(self, msg: dict[str, Any]) -> None:
        proc = msg.get("proc")
        if proc == self.proc:
            self._heard_self()
        elif isinstance(proc, str):
            self.seen(proc)

    def _bus_silence_s(self) -> float:
        return max(BUS_SILENT_BEATS * self.config.heartbeat_s, BUS_SILENT_MIN_S)

    def presence_known(self) -> bool:
        """Whether this process can tell who is connected to a game on the other processes: always in
        the embedded mode; in shared mode while its own heartbeats come back through the bus (it
        hears what the others announce) and, after a silence, once the others had time to tell
        their counts again. While False a seated player counts as present (:meth:`OnlineRoom.present`):
        a Redis outage must not make a connected opponent "left", nor claimable."""
        if not self.shared:
            return True
        now = time.monotonic()
        return now - self._bus_heard <= self._bus_silence_s() and now >= self._presence_from

    def _heard_self(self) -> None:
        """This process's heartbeat came back through the bus; after a silence (Redis was away or
        this process's connection to it) the bus is back: :meth:`_bus_back`."""
        now = time.monotonic()
        gap, self._bus_heard = now - self._bus_heard, now
        if gap > self._bus_silence_s():
            self._presence_from = now + 2 * self.config.heartbeat_s
            self._listening_since = now
            log.warning("online: the message bus is back after %.1f s of silence; re-reading the %d "
                        "games held here", gap, len(self.rooms))
            self.spawn(self._bus_back(now))

    async def _bus_back(self, now: float) -> None:
        """The bus carries messages again: what it did not carry meanwhile is caught up. Every room
        held here tells its socket counts again and asks the others for theirs (zeros included, so a
        count that went stale is put right); a grace period that was running starts again from now
        (the silence was no evidence that a player was gone); every room is re-read when the store
        has a newer revision (the changes other processes announced meanwhile) and sent to its
        sockets, which resync; and once the others' counts had time to arrive, sent again."""
        rooms = list(self.rooms.values())
        for room in rooms:
            channel = f"sync:{room.session.id}"
            self.bus.publish(channel, room._presence_msg())
            self.bus.publish(channel, {"type": "presence_query", "proc": self.proc})
            for color in (RED, BLACK):
                if room.left_at[color] is not None:
                    room.left_at[color] = max(room.left_at[color], self.time.monotonic())
                    task = room._claim_tasks.pop(color, None)
                    if task is not None:
                        task.cancel()
                    room._claim_tasks[color] = asyncio.get_running_loop().create_task(room._claim_open(color))
        for room in rooms:
            await self._reread(room)
        await asyncio.sleep(max(0.0, self._presence_from - time.monotonic()) + 0.01)
        for room in rooms:
            await room.broadcast()

    async def _reread(self, room: OnlineRoom) -> None:
        """Re-read ``room`` under its lock when the store is ahead of it, and send it to its sockets;
        a database outage marks it for :meth:`_recover` instead."""
        try:
            async with room._lock:
                await room.refresh_async()
        except sa.exc.SQLAlchemyError as exc:
            if not is_outage(exc):
                raise
            self.db_trouble(room, exc)
            return
        await room.broadcast()

    def db_trouble(self, room: OnlineRoom, exc: BaseException) -> None:
        """A change or a read of ``room`` met a database outage (:func:`~xiangqi.online.store.is_outage`):
        the room is re-read once the database answers again (:meth:`_recover`: a change whose
        commit was sent but not confirmed shows up then, if it was made; the sockets resync)."""
        self._unsure[room.session.id] = room
        if not self._recovering:
            self._recovering = True
            log.warning("online: the database is unreachable (%s); waiting for it", _first_line(exc))
            self.spawn(self._recover())

    async def _recover(self) -> None:
        """Ask the database once more after :attr:`OnlineConfig.retry_s`, the waits doubling up to
        :data:`~xiangqi.online.store.RETRY_AFTER_S`, until it answers; then re-read the rooms that met
        the outage (:meth:`_reread`)."""
        try:
            while self._unsure:
                wait = self.config.retry_s
                while True:
                    await asyncio.sleep(wait)
                    wait = min(2 * wait, float(RETRY_AFTER_S))
                    try:
                        await self.run_db(self.db.revision, "")
                    except sa.exc.SQLAlchemyError as exc:
                        if is_outage(exc):
                            continue
                        raise
                    break
                rooms = list(self._unsure.values())
                self._unsure.clear()
                log.warning("online: the database answers again; re-reading %d games", len(rooms))
                for room in rooms:
                    await self._reread(room)
        finally:
            self._recovering = False

    async def _heartbeat(self) -> None:
        while True:
            self.bus.publish("procs", {"type": "alive", "proc": self.proc})
            now = time.monotonic()
            self._note_beat(now)
            for proc in self._gone_procs(now):
                del self.procs[proc]
                self.spawn(self._process_gone(proc))  # (its retries must not hold up the heartbeat)
            await asyncio.sleep(self.config.heartbeat_s)

    def _note_beat(self, now: float) -> None:
        """This process's heartbeat loop runs at ``now`` (monotonic seconds). A beat later than
        :data:`BUS_SILENT_BEATS` intervals (and :data:`BUS_SILENT_MIN_S`) after the last one means
        this process's own event loop was stalled (an overloaded machine): what the others sent
        meanwhile is still unread, so listening starts again from now."""
        if now - self._last_beat > self._bus_silence_s():
            self._listening_since = now
        self._last_beat = now

    def _gone_procs(self, now: float) -> list[str]:
        """The other processes to count as gone at ``now``: silent for
        :attr:`OnlineConfig.process_ttl_s` seconds of this process's listening. Neither a silent bus
        (Redis away: its own heartbeats did not come back) nor a stall of this process's own event
        loop is taken for another's death: either would make every other process look gone, withdraw
        their seeks and re-read every room."""
        ttl = self.config.process_ttl_s
        return [p for p, t in self.procs.items()
                if now - max(t, self._listening_since) > ttl and self._bus_heard - t > ttl]

    async def _process_gone(self, proc: str) -> None:
        """A process stopped beating: its sockets are gone (their seats may be claimed after the grace
        period), its seeks are withdrawn, every game held here is re-read from the store (a change it
        stored but did not announce is picked up), the games it held are taken up here and the games
        it ended but did not rate are rated (:meth:`sweep`). Each database step is retried when it
        fails (:meth:`_retrying`); one that keeps failing is logged and left to the periodic sweep."""
        log.warning("online: server process %s is gone; taking up its games", proc)
        for room in list(self.rooms.values()):
            if room.remote.pop(proc, None) is not None:
                room.recount()
            await self._retrying(f"re-reading online game {room.session.id}", room.refresh_async)
            await room.broadcast()
        ids = await self._retrying(f"withdrawing the seeks of process {proc}",
                                   self.run_db, self.db.drop_lobby_items_of, proc)
        if ids:
            self.lobby.withdraw(ids)  # type: ignore[attr-defined]
        await self._retrying("taking up the games being played", self.resume_playing_async)
        await self._retrying("rating the games ended but not rated", self.sweep)

    async def _retrying(self, what: str, fn: Any, *args: Any) -> Any:
        """``await fn(*args)``, tried again after a database error (waits of :attr:`OnlineConfig.retry_s`,
        doubling, :data:`DB_RETRIES` tries in all; each failure logged). Returns its result, or None
        when every try failed."""
        wait = self.config.retry_s
        for attempt in range(1, DB_RETRIES + 1):
            try:
                return await fn(*args)
            except sa.exc.SQLAlchemyError as exc:
                if attempt == DB_RETRIES:
                    log.error("online: %s failed %d times (%s); the periodic sweep tries again", what,
                              attempt, exc)
                    return None
                log.warning("online: %s failed (try %d of %d: %s); again in %.1f s", what, attempt,
                            DB_RETRIES, exc, wait)
                await asyncio.sleep(wait)
                wait *= 2
        return None

    async def _sweeper(self) -> None:
        while True:
            await asyncio.sleep(self.config.sweep_s)
            await self._retrying("the sweep of games ended but not rated", self.sweep)

    async def sweep(self) -> int:
        """Shared mode, every :attr:`OnlineConfig.sweep_s` seconds and when a process is gone: finish
        the work a dead process left. Rated games that are finished but not rated (ended more than
        :attr:`OnlineConfig.settle_after_s` ago) are rated exactly once over all the processes
        (:meth:`OnlineStore.rate_once`: the first claim wins; the others find nothing to claim), and
        the holders of their rooms re-read them; games still ``playing`` whose stored clock has run
        out and that no room here holds are taken up, so that the clock's watchdog ends them on time
        (the first process to store the time-out wins the version check, and the end is rated once).
        Finished games nobody put into the games database are put there once (:meth:`export_unexported`).
        Returns how many games this call rated. Raises SQLAlchemy's errors."""
        rated = await self._rate_unsettled(self.config.settle_after_s)
        await self.export_unexported()
        rows = await self.run_db(self.db.playing_rows, 10_000)
        expired = [r["id"] for r in rows if r["id"] not in self.rooms and _ran_out(r, self.time)]
        for gid in expired:
            row = await self.run_db(self.db.game, gid)
            if row is not None and row["status"] == "playing" and gid not in self.rooms:
                try:
                    self._rebuild(row, await self.run_db(self.db.moves, gid))
                except (XiangqiError, SessionError, KeyError, TypeError):
                    log.exception("online game %s could not be taken up", gid)
        return rated

    async def settle_at_start(self) -> int:
        """The embedded mode, once at start: the work the previous run of this one process left when
        it died (the shared mode's sweep does it every :attr:`OnlineConfig.sweep_s`): the rated games
        it ended and did not rate are rated, the finished games it did not put into the games
        database — unclaimed, or claimed before this start and not written — are put there. Returns
        how many games it exported. Raises SQLAlchemy's errors."""
        await self._rate_unsettled(0.0)
        return await self.export_unexported(older_than_s=0.0, stale_before=self._started_at)

    async def _rate_unsettled(self, older_than_s: float) -> int:
        """Rate the finished rated games not rated that ended more than ``older_than_s`` ago (exactly
        once over the processes: :meth:`OnlineStore.rate_once`); how many this call rated."""
        rated = 0
        for gid in await self.run_db(self.db.unsettled, older_than_s):
            row = await self.run_db(self.db.game, gid)
            if row is None or not row.get("result"):
                continue
            change = await self.run_db(self.db.rate_once, gid, _rater(row["result"]))
            if change is None:
                continue  # another process rated it first
            rated += 1
            log.info("online: game %s rated by the sweep", gid)
            rev = await self.run_db(self.db.revision, gid)
            self.bus.publish(f"sync:{gid}", {"type": "changed", "proc": self.proc, "rev": rev or 0})
            room = self.rooms.get(gid)
            if room is not None:
                async with room._lock:
                    await room.refresh_async()
                await room.broadcast()
        return rated

    async def export_unexported(self, older_than_s: float | None = None,
                                stale_before: dt.datetime | None = None) -> int:
        """Part of :meth:`sweep`: put the finished games whose export nobody claimed (ended more than
        ``older_than_s``, default :attr:`OnlineConfig.settle_after_s`, ago: their process died before
        it put them there) or whose claim is older than ``stale_before`` (default now less
        :attr:`OnlineConfig.export_lease_s`: their process died between the claim and the write) into
        the games database, one claim at a time over all the processes
        (:meth:`OnlineStore.claim_export`), as :meth:`finished` does for a game ending here (the same
        PGN, so the same ECCO); the holders of their rooms re-read them (the ``db_id``). Returns how
        many this call exported."""
        if self.games_db is None:
            return 0
        if older_than_s is None:
            older_than_s = self.config.settle_after_s
        if stale_before is None:
            stale_before = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=self.config.export_lease_s)
        done = 0
        for gid in await self.run_db(functools.partial(self.db.unexported, older_than_s,
                                                       stale_before=stale_before)):
            if not await self.run_db(self.db.claim_export, gid, stale_before):
                continue  # another process (or the one that ended it) has it
            db_id = None
            try:
                row = await self.run_db(self.db.game, gid)
                moves = await self.run_db(self.db.moves, gid)
                if row is not None and moves:
                    session, _seats, _preset = self.session_from(row, moves)
                    db_id = await asyncio.to_thread(self._export, gid, session.to_pgn("chinese", "zh"))
            except Exception:
                log.exception("online game %s could not be put into the games database", gid)
                await self.run_db(self.db.release_export, gid)
                continue
            if db_id is None:
                continue
            rev = await self.run_db(self.db.exported, gid, db_id)
            done += 1
            log.info("online game %s put into the games database by the sweep", gid)
            self.bus.publish(f"sync:{gid}", {"type": "changed", "proc": self.proc, "rev": rev or 0})
            room = self.rooms.get(gid)
            if room is not None:
                async with room._lock:
                    await room.refresh_async()
                await room.broadcast()
        return done

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` as a task of the loop, kept until it ends (errors logged)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("online task failed", exc_info=t.exception())
        task.add_done_callback(done)

    # -- identities, cookies, CSRF -------------------------------------------------------------------

    def csrf_token(self, csrf_cookie: str) -> str:
        """The CSRF token of a browser's ``xq_csrf`` cookie (an HMAC under the server's secret)."""
        return _sign(self.secret, "csrf:" + csrf_cookie)

    def csrf_ok(self, csrf_cookie: str | None, token: str | None) -> bool:
        """Whether ``token`` is the CSRF token of ``csrf_cookie`` (constant time)."""
        if not csrf_cookie or not token or len(csrf_cookie) > 100:
            return False
        return hmac.compare_digest(self.csrf_token(csrf_cookie), token)

    def guest_cookie(self) -> tuple[Identity, str]:
        """A new guest identity and its signed cookie value."""
        gid = "g-" + secrets.token_hex(8)
        return self._guest(gid), f"{gid}.{_sign(self.secret, 'guest:' + gid)}"

    @staticmethod
    def _guest(gid: str) -> Identity:
        return Identity("guest", gid, "游客" + gid[2:6])

    def identity(self, cookies: dict[str, str]) -> Identity | None:
        """Who the cookies speak for: the logged-in user, else the guest, else None."""
        token = cookies.get("xq_session")
        if token:
            user = self.accounts.session_user(token)
            if user is not None:
                return self.user_identity(user)
        raw = cookies.get("xq_guest")
        if raw and "." in raw and len(raw) < 100:
            gid, sig = raw.rsplit(".", 1)
            if hmac.compare_digest(_sign(self.secret, "guest:" + gid), sig):
                return self._guest(gid)
        return None

    async def identity_async(self, cookies: dict[str, str]) -> Identity | None:
        """:meth:`identity` for the event loop: in shared mode the session's look-up (a read and an
        UPDATE of its expiry on PostgreSQL) runs in a worker thread (:meth:`run_db`), so that a slow
        query delays only this request; in the embedded mode in place (SQLite in WAL mode, one
        indexed read and write: a few hundred microseconds, like a move's save)."""
        token = cookies.get("xq_session")
        if token and self.shared:
            user = await self.run_db(self.accounts.session_user, token)
            if user is not None:
                return self.user_identity(user)
            return self.identity({k: v for k, v in cookies.items() if k != "xq_session"})
        return self.identity(cookies)

    @staticmethod
    def user_identity(user: User) -> Identity:
        """The identity of an account."""
        return Identity("user", f"u-{user.id}", user.username, user.id)

    # -- accounts (blocking: called from worker threads) -----------------------------------------------

    def register(self, username: object, password: object, address: str | None) -> tuple[User, str]:
        """A new account, logged in: ``(user, session token)``; 429 past the registrations per hour."""
        self.registrations.hit(address or "?")
        self.accounts.register(username, password)
        return self.accounts.login(username, password, address)

    def login(self, username: object, password: object, address: str | None) -> tuple[User, str]:
        """``(user, session token)``; raises AccountError / RateLimited."""
        return self.accounts.login(username, password, address)

    def me(self, who: Identity | None) -> dict[str, Any]:
        """The contract's Me."""
        if who is None:
            return {"user": None, "ratings": [], "playing": []}
        if self.shared:
            playing = self.db.playing_of(who.id)
        else:
            # (a copy first: the /me route runs in a worker thread while the loop adds rooms; dict.copy
            # runs no Python code, where list(items()) allocates a tuple an item, any of which may start
            # a collection whose callbacks or finalizers let the loop's thread in mid-iteration)
            playing = [gid for gid, r in self.rooms.copy().items()
                       if r.status == "playing" and r.seat_of(who) is not None]
        return {"user": who.view(), "ratings": self.ratings_view(who.user_id), "playing": playing}

    def ratings_view(self, user_id: int | None) -> list[dict[str, Any]]:
        """The user's RatingViews (none for a guest)."""
        if user_id is None:
            return []
        from xiangqi.study.rating import Rating

        return [rating_view(r["category"], Rating(r["rating"], r["rd"], r["volatility"]), r["games"])
                for r in self.db.ratings_of(user_id)]

    # -- the lobby ---------------------------------------------------------------------------------

    def computers(self) -> list[dict[str, Any]]:
        """The computer levels of the lobby: ``[{level, name_zh, name_en, elo, rank_zh}]`` (read once:
        the levels' measured Elo do not change while the server runs)."""
        if self._computers is None:
            from xiangqi.app.opponents.players import levels

            self._computers = [{"level": lv.key, "name_zh": lv.name_zh, "name_en": lv.name_en,
                                "elo": None if lv.elo is None else round(lv.elo), "rank_zh": lv.rank_zh}
                               for lv in levels()]
        return [dict(c) for c in self._computers]

    def lobby_view(self, rows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The contract's lobby (``GET /lobby``); shared mode: every process's games, from ``rows``
        (:meth:`OnlineStore.playing_rows`, read here when not given)."""
        if self.shared:  # every process's games
            if rows is None:
                rows = self.db.playing_rows()
            games = [_summary_row(g, self.rooms.get(g["id"])) for g in rows]
        else:
            games = [r.summary() for r in self.rooms.copy().values() if r.status == "playing"]
        return {"version": self.lobby.version, "seeks": [s.view() for s in self.lobby.seeks.copy().values()],
                "games": games,
                "computers": self.computers(), "online": sum(self.sockets.values())}

    async def lobby_view_async(self) -> dict[str, Any]:
        """:meth:`lobby_view` for the event loop: in shared mode the games' read runs in a worker
        thread (:meth:`run_db`), the rest on the loop (the rooms and seeks are the loop's)."""
        if not self.shared:
            return self.lobby_view()
        return self.lobby_view(await self.run_db(self.db.playing_rows))

    def _lobby_changed(self) -> None:
        """The lobby changed (a seek, a game started or ended): its view goes out to the lobby
        sockets once :data:`LOBBY_COALESCE_S` has passed, one view for every change meanwhile."""
        if self._lobby_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # outside the server's loop (start-up)
            self._publish_lobby()
            return
        self._lobby_due = True
        loop.call_later(LOBBY_COALESCE_S, self._publish_lobby)

    def _publish_lobby(self) -> None:
        self._lobby_due = False
        if not self.shared and self.bus.subscribers("lobby") == 0:
            return  # nobody in this one process looks at the lobby (a socket gets it when it connects)
        if self.shared:  # the games' read off the event loop
            self.spawn(self._publish_lobby_async())
            return
        self.bus.publish("lobby", Encoded(type="lobby", lobby=self.lobby_view()))

    async def _publish_lobby_async(self) -> None:
        """Shared mode: the lobby's view, its games read in a worker thread, published; one at a time
        (a change meanwhile publishes once more after it), so an older view never follows a newer."""
        if self._lobby_busy:
            self._lobby_again = True
            return
        self._lobby_busy = True
        try:
            while True:
                self._lobby_again = False
                try:
                    view = await self.lobby_view_async()
                except sa.exc.SQLAlchemyError:
                    log.exception("the lobby's view could not be read")
                    return
                self.bus.publish("lobby", Encoded(type="lobby", lobby=view))
                if not self._lobby_again:
                    return
        finally:
            self._lobby_busy = False

    def create_seek(self, who: Identity, time_control: str, rated: bool, color: str,
                    address: str | None = None) -> dict[str, Any]:
        """A seek from client ``address`` (LobbyError on refusal); its SeekView."""
        rating = None
        if who.user_id is not None and time_control in self.presets:
            cat = self.presets[time_control].category
            r, games = self.db.rating(who.user_id, cat)
            rating = rating_view(cat, r, games)
        return self.lobby.create_seek(who, time_control, rated, color, rating, address=address).view()

    async def create_seek_async(self, who: Identity, time_control: str, rated: bool,
                                color: str, address: str | None = None) -> dict[str, Any]:
        """:meth:`create_seek` for the event loop: in shared mode the seat's rating read and the seek's
        insert run in worker threads (:meth:`SharedLobby.create_seek_async` keeps the lobby's order:
        the checks and the seek's place in memory come first, an acceptance waits for the insert);
        in the embedded mode in place (an in-memory lobby and one indexed SQLite read)."""
        if not self.shared:
            return self.create_seek(who, time_control, rated, color, address)
        rating = None
        if who.user_id is not None and time_control in self.presets:
            cat = self.presets[time_control].category
            r, games = await self.run_db(self.db.rating, who.user_id, cat)
            rating = rating_view(cat, r, games)
        seek = await self.lobby.create_seek_async(  # type: ignore[attr-defined]
            who, time_control, rated, color, rating, address)
        return seek.view()

    async def cancel_seek(self, who: Identity, seek_id: str) -> None:
        """Cancel ``who``'s seek (its row deleted off the event loop in shared mode)."""
        if self.shared:
            await self.lobby.cancel_seek_async(who, seek_id)  # type: ignore[attr-defined]
        else:
            self.lobby.cancel_seek(who, seek_id)

    async def create_challenge(self, who: Identity, time_control: str, rated: bool,
                               color: str, address: str | None = None) -> dict[str, Any]:
        """A challenge link made from client ``address`` (its row inserted off the event loop in
        shared mode); its view."""
        if self.shared:
            ch = await self.lobby.create_challenge_async(  # type: ignore[attr-defined]
                who, time_control, rated, color, address)
        else:
            ch = self.lobby.create_challenge(who, time_control, rated, color, address=address)
        return ch.view()

    async def challenge(self, challenge_id: str) -> dict[str, Any]:
        """The view of an open challenge (one made on another process read off the event loop)."""
        if self.shared:
            return (await self.lobby.challenge_async(challenge_id)).view()  # type: ignore[attr-defined]
        return self.lobby.challenge(challenge_id).view()

    async def cancel_challenge(self, who: Identity, challenge_id: str) -> None:
        """Cancel ``who``'s challenge (its row deleted off the event loop in shared mode)."""
        if self.shared:
            await self.lobby.cancel_challenge_async(who, challenge_id)  # type: ignore[attr-defined]
        else:
            self.lobby.cancel_challenge(who, challenge_id)

    async def drop_seeks_of(self, who_id: str) -> None:
        """Withdraw an identity's seeks (its last lobby socket closed)."""
        if self.shared:
            await self.lobby.drop_seeks_of_async(who_id)  # type: ignore[attr-defined]
        else:
            self.lobby.drop_seeks_of(who_id)

    async def accept_seek(self, who: Identity, seek_id: str, address: str | None = None) -> str:
        """Accept a seek from client ``address``: the game starts; its id."""
        if self.shared:  # the shared lobby's rows, off the event loop
            seek = await self.lobby.take_seek_async(who, seek_id)  # type: ignore[attr-defined]
            await self.lobby.drop_seeks_of_async(who.id)  # type: ignore[attr-defined]
        else:
            seek = self.lobby.take_seek(who, seek_id)
            self.lobby.drop_seeks_of(who.id)  # the acceptor's own seek would start a second game
        owner_red = seat_colors(seek.color)
        red, black = (seek.by, who) if owner_red else (who, seek.by)
        room = await self.start_game(red, black, seek.preset, seek.rated,
                                     same_address=_same_address(seek.address, address))
        for ident in (seek.by, who):
            self.bus.publish(f"user:{ident.id}", {"type": "game_start", "game_id": room.session.id,
                                                  "seek_id": seek.id, "color": _cname(room.seat_of(ident))})
        return room.session.id

    async def accept_challenge(self, who: Identity, challenge_id: str, address: str | None = None) -> str:
        """Accept a challenge link from client ``address``: the game starts; its id."""
        if self.shared:  # the shared lobby's rows, off the event loop
            ch = await self.lobby.take_challenge_async(who, challenge_id)  # type: ignore[attr-defined]
            await self.lobby.drop_seeks_of_async(who.id)  # type: ignore[attr-defined]
            await self.lobby.drop_seeks_of_async(ch.by.id)  # type: ignore[attr-defined]
        else:
            ch = self.lobby.take_challenge(who, challenge_id)
            self.lobby.drop_seeks_of(who.id)
            self.lobby.drop_seeks_of(ch.by.id)
        owner_red = seat_colors(ch.color)
        red, black = (ch.by, who) if owner_red else (who, ch.by)
        room = await self.start_game(red, black, ch.preset, ch.rated,
                                     same_address=_same_address(ch.address, address))
        for ident in (ch.by, who):
            self.bus.publish(f"user:{ident.id}", {
                "type": "game_start", "game_id": room.session.id, "challenge_id": ch.id,
                "color": _cname(room.seat_of(ident))})
        return room.session.id

    async def computer_game(self, who: Identity, level: str, time_control: str, color: str,
                            address: str | None = None) -> str:
        """A casual game against the computer at ``level`` for ``who``, asked from ``address``; its id.

        Refused with 429 ``too_many_games`` when ``who`` plays
        :attr:`~OnlineConfig.computer_games_per_player` computer games already, or the games started
        from ``address`` are :attr:`~OnlineConfig.computer_games_per_address` (one player must not
        hold every slot), and with 429 ``rate_limited`` when all
        :attr:`~OnlineConfig.max_computer_games` slots are taken."""
        from xiangqi.app.opponents.players import levels

        lv = next((lv for lv in levels() if lv.key == level), None)
        if lv is None:
            raise OnlineError(f"unknown level {level!r}", 400, "bad_request")
        preset = self.lobby.check(time_control, False, color, who)
        playing = [(next(i.id for i in r.seats.values() if i.kind != "engine"), r.started_from)
                   for r in self.rooms.values() if r.status == "playing"
                   and any(i.kind == "engine" for i in r.seats.values())] + self._computer_starts
        mine = sum(1 for ident, _ in playing if ident == who.id)
        per_player = self.config.computer_games_per_player
        if mine >= per_player:
            raise OnlineError(f"you are playing {mine} games against the computer already (at most "
                              f"{per_player} at once per player): finish or resign one first", 429,
                              "too_many_games")
        here = sum(1 for _, at in playing if address is not None and at == address)
        per_address = self.config.computer_games_per_address
        if here >= per_address:
            raise OnlineError(f"{here} games against the computer are being played from your address "
                              f"already (at most {per_address} at once per address): finish or resign "
                              "one first", 429, "too_many_games")
        if len(playing) >= self.config.max_computer_games:
            raise OnlineError("the computer is busy with other games: try again later", 429,
                              "rate_limited", 30)
        engine = Identity("engine", f"engine:{level}", lv.name_zh, None, level)
        me_red = seat_colors(color)
        start = (who.id, address)
        self._computer_starts.append(start)  # (no await since the counts: they hold until it is held)
        try:
            room = await self.start_game(who if me_red else engine, engine if me_red else who, preset, False)
            room.started_from = address
        finally:
            self._computer_starts.remove(start)
        return room.session.id

    # -- rooms -------------------------------------------------------------------------------------

    async def start_game(self, red: Identity, black: Identity, preset: Preset, rated: bool, *,
                         same_address: str | None = None) -> OnlineRoom:
        """A new online game between ``red`` and ``black``: stored, held, its clock and computer
        started. ``same_address``: the client address both players came from, when it was one (a
        rated game between two accounts then counts towards a same-address flag once rated:
        :data:`~xiangqi.online.store.SAME_ADDRESS_GAMES`)."""
        level = next((i.level for i in (red, black) if i.kind == "engine"), None) or "beginner"
        gid = uuid.uuid4().hex
        headers = {"Event": "pyxiangqi online", "Site": "pyxiangqi", "Red": red.name, "Black": black.name,
                   "TimeControl": preset.key}
        for ident in (red, black):  # one player, one game: an unplayed game of theirs ends here
            await self._abort_unplayed(ident)
        session = GameSession(red="engine" if red.kind == "engine" else "human",
                              black="engine" if black.kind == "engine" else "human", level=level,
                              fen=STARTING_FEN, game_id=gid, headers=headers, time_control=preset.control)
        # each side's clock starts with its first move (lichess's rule; app/play/clock.py, "First moves"),
        # which comes within FIRST_MOVE_S in a game of two players
        people = all(i.kind != "engine" for i in (red, black))
        session.clock = GameClock(preset.control, free_first_moves=True, source=self.time,
                                  first_move_s=FIRST_MOVE_S.get(preset.category, 35.0) if people else None)
        session.clock.start(session.board.turn)
        row: dict[str, Any] = {"id": gid, "time_control": preset.key, "category": preset.category,
                               "rated": rated, "start_fen": STARTING_FEN,
                               "clock": json.dumps(clock_record(session)),
                               "same_address": (same_address[:64] if same_address and rated
                                                and red.user_id is not None and black.user_id is not None
                                                else None)}
        for side, ident in (("red", red), ("black", black)):
            row.update({f"{side}_kind": ident.kind, f"{side}_id": ident.id, f"{side}_name": ident.name,
                        f"{side}_user_id": ident.user_id})
        await self.run_db(self.db.create_game, row)
        room = self._hold(session, {RED: red, BLACK: black}, preset, rated, [])
        self._lobby_changed()
        return room

    async def _abort_unplayed(self, who: Identity) -> None:
        """Abort the unplayed games of ``who`` held here: those in which a side has not moved yet
        (fewer than :data:`UNPLAYED_PLIES` plies): called when ``who`` starts or accepts another
        game, so that a player is never seated in two live games (an unplayed challenge game stayed
        live beside the new one). A game in which both sides have moved is left as it is, though it
        may still be aborted by hand (:meth:`OnlineRoom.can_abort`, :data:`ABORT_PLIES`), and so are
        games finished meanwhile."""
        if who.kind == "engine":
            return
        for room in list(self.rooms.values()):
            color = room.seat_of(who)
            if color is None or not room.can_abort() or len(room.session.moves) >= UNPLAYED_PLIES:
                continue
            with contextlib.suppress(OnlineError):
                await room._abort(color, {})

    def _hold(self, session: GameSession, seats: dict[Color, Identity], preset: Preset, rated: bool,
              saved: list[str], status: str = "playing") -> OnlineRoom:
        provider = self.config.move_provider if any(i.kind == "engine" for i in seats.values()) else None
        room = OnlineRoom(self, session, seats, preset, rated, saved, status=status, move_provider=provider)
        self.rooms[session.id] = room
        self.registry.add(room)
        with contextlib.suppress(RuntimeError):  # outside the loop (start-up): armed by the lifespan
            if status == "playing":
                room.arm_clock()
                if not self.shared:  # shared: where its player's socket is (OnlineRoom.connect)
                    room.kick_engine()
            else:
                self.spawn(self._evict_later(room))
        return room

    async def _evict_later(self, room: OnlineRoom) -> None:
        """Forget a finished room once nobody has watched it for :data:`FINISHED_KEEP_S` (memory stays
        bounded; :meth:`room` rebuilds it from the move log when it is asked for again)."""
        while True:
            await asyncio.sleep(FINISHED_KEEP_S)
            if room.watchers == 0 and not any(room.conns.values()):
                break
        if self.rooms.get(room.session.id) is room:
            del self.rooms[room.session.id]
            self.registry.remove(room.session.id)
            await room.shutdown()

    def room(self, game_id: str) -> OnlineRoom | None:
        """The room of ``game_id``: held in memory, or rebuilt from the move log (a finished game, or
        one a restart left behind); None for an unknown id."""
        room = self.rooms.get(game_id)
        if room is not None:
            if self.shared:
                room.refresh()
            return room
        if not isinstance(game_id, str) or len(game_id) > 40:
            return None
        row = self.db.game(game_id)
        if row is None:
            return None
        return self._rebuild(row, self.db.moves(game_id))

    async def room_async(self, game_id: str) -> OnlineRoom | None:
        """:meth:`room` for the event loop: in shared mode the revision check of a held room and the
        reads of one rebuilt from the store run in worker threads (:meth:`run_db`); in the embedded
        mode a held room is answered from memory and a rebuilt one is read in place (SQLite, two
        indexed reads, once per finished game until it is evicted again)."""
        if not self.shared:
            return self.room(game_id)
        room = self.rooms.get(game_id)
        if room is not None:
            try:
                await room.refresh_async()
            except sa.exc.SQLAlchemyError as exc:  # the copy held here shows only stored changes:
                if not is_outage(exc):              # it is served; re-read when the database is back
                    raise
                self.db_trouble(room, exc)
        else:
            if not isinstance(game_id, str) or len(game_id) > 40:
                return None
            row = await self.run_db(self.db.game, game_id)
            if row is None:
                return None
            moves = await self.run_db(self.db.moves, game_id)
            room = self.rooms.get(game_id)  # another request rebuilt it meanwhile
            if room is None:
                room = self._rebuild(row, moves)
        if len(room._ratings) < 2:
            await room.load_ratings()
        return room

    def _rebuild(self, row: dict[str, Any], moves: list[str]) -> OnlineRoom:
        """A room from its stored row and move log (replayed through the core)."""
        session, seats, preset = self.session_from(row, moves)
        room = self._hold(session, seats, preset, bool(row["rated"]), moves, row["status"])
        room._take_row(row)
        room.status = row["status"]
        if row["status"] == "playing":  # both players are away until their sockets come back
            now = self.time.monotonic()
            for color, ident in seats.items():
                if ident.kind != "engine":
                    room.left_at[color] = now
            if self.shared:  # who is connected elsewhere
                self.bus.publish(f"sync:{session.id}", {"type": "presence_query", "proc": self.proc})
        return room

    def session_from(self, row: dict[str, Any], moves: list[str]) -> tuple[GameSession, dict[Color, Identity],
                                                                          Preset]:
        """A game's session, seats and time control from its stored row and move log (replayed through
        the core). Shared mode: the clock runs since its stored time (:func:`restart_clock`)."""
        seats = {}
        for color, side in ((RED, "red"), (BLACK, "black")):
            kind, ident = row[f"{side}_kind"], row[f"{side}_id"]
            level = ident.split(":", 1)[1] if kind == "engine" else None
            seats[color] = Identity(kind, ident, row[f"{side}_name"], row[f"{side}_user_id"], level)
        preset = self.presets.get(row["time_control"]) or PRESETS["5+3"]
        rec = {"id": row["id"], "start_fen": row["start_fen"], "moves": moves,
               "red": "engine" if seats[RED].kind == "engine" else "human",
               "black": "engine" if seats[BLACK].kind == "engine" else "human",
               "level": next((i.level for i in seats.values() if i.level), None) or "beginner",
               "headers": {"Event": "pyxiangqi online", "Red": seats[RED].name, "Black": seats[BLACK].name,
                           "TimeControl": preset.key},
               "clock": row.get("clock") or GameClock(preset.control).to_record()}
        if row["status"] != "playing" and row.get("termination") and row["status"] == "finished":
            winner = {"1-0": RED, "0-1": BLACK}.get(row.get("result") or "")
            rec["declared"] = {"termination": row["termination"] if row["termination"] != "abandoned"
                               else "resignation", "winner": winner,
                               "reason_zh": row.get("reason_zh") or "",
                               "reason_en": row.get("reason_en") or ""}
        elif row["status"] == "aborted":  # (its stored reason: a side may have let its first move's time go)
            rec["declared"] = {"termination": "agreement", "winner": None,
                               "reason_zh": row.get("reason_zh") or "对局已取消",
                               "reason_en": row.get("reason_en") or "game aborted"}
        session = self.timed(GameSession.from_record(rec))
        if self.shared:
            restart_clock(session, row.get("clock"))
        return session, seats, preset

    def timed(self, session: GameSession) -> GameSession:
        """``session`` (returned) with its clock on this service's time source: a session rebuilt from a
        record starts its clock on the machine's, so a running clock starts again from now on ours
        (the time while it was stored is not charged, as when it was rebuilt)."""
        clk = session.clock
        if clk.source is not self.time:
            clk.source = self.time
            if clk.running is not None:
                clk.start(clk.running)
        return session

    def resume_playing(self) -> int:
        """Take up every game the store says is still being played (after a restart); their count."""
        return self._take_up(self.db.playing_games())

    async def resume_playing_async(self) -> int:
        """:meth:`resume_playing` with the reads in a worker thread (shared mode)."""
        return self._take_up(await self.run_db(self.db.playing_games))

    def _take_up(self, games: list[tuple[dict[str, Any], list[str]]]) -> int:
        """Rebuild the rooms of ``games`` (``(row, moves)`` of :meth:`OnlineStore.playing_games`)
        not held yet; a game that cannot be rebuilt is logged and skipped. Returns how many were."""
        n = 0
        for row, moves in games:
            if row["id"] not in self.rooms:
                try:
                    self._rebuild(row, moves)
                    n += 1
                except (XiangqiError, SessionError, KeyError, TypeError):
                    log.exception("online game %s could not be taken up again", row["id"])
        return n

    async def finished(self, room: OnlineRoom) -> None:
        """A game ended: store the result, rate it, put it into the games database, tell everyone."""
        s = room.session
        out = s.outcome
        result = None
        if room.status == "finished" and out is not None:
            result = "1-0" if out.winner == RED else "0-1" if out.winner == BLACK else "1/2-1/2"
        summary = room.summary()
        try:
            await self.run_db(functools.partial(
                self.db.finish, s.id, status=room.status, result=result, termination=summary["termination"],
                reason_zh=None if out is None else out.reason_zh[:80],
                reason_en=None if out is None else out.reason_en[:120]))
            red, black = room.seats[RED], room.seats[BLACK]
            if (room.status == "finished" and room.rated and result is not None and red.user_id is not None
                    and black.user_id is not None):
                change = await self.run_db(self.db.rate_once, s.id, _rater(result))
                if change is None:  # rated already (another process's sweep): the stored change
                    row = await self.run_db(self.db.game, s.id)
                    change = None if row is None else row.get("rating_change")
                room.rating_change = change
                room._ratings.clear()  # the seats show the new ratings
                await room.shared_update()
        except sa.exc.SQLAlchemyError:
            log.exception("the end of online game %s could not be stored", s.id)
        await room.broadcast()
        self._lobby_changed()
        self.spawn(self._evict_later(room))
        if room.status == "finished" and s.moves and self.games_db is not None:
            pgn = s.to_pgn("chinese", "zh")
            try:  # exactly once over the processes: a sweep elsewhere may have it (export_unexported)
                claimed = await self.run_db(self.db.claim_export, s.id)
            except sa.exc.SQLAlchemyError:
                log.exception("online game %s: its export could not be claimed (the sweep does it)", s.id)
                return
            if not claimed:
                return
            try:
                room.db_id = await asyncio.to_thread(self._export, s.id, pgn)
            except Exception:
                log.exception("online game %s could not be put into the games database", s.id)
                with contextlib.suppress(sa.exc.SQLAlchemyError):
                    await self.run_db(self.db.release_export, s.id)
            else:
                await self.run_db(functools.partial(self.db.set_review, s.id, db_id=room.db_id))
                await room.shared_update()
                await room.broadcast()

    def _export(self, game_id: str, pgn: str) -> int:
        from xiangqi.core.pgn import read_games
        from xiangqi.db.owned import put_game

        game = read_games(pgn)[0]
        # the game's id is part of the token: two online games with the same players, date and moves
        # are two games (the games database's hash column is unique)
        token = hashlib.sha256(f"{game_id}\n{pgn}".encode()).hexdigest()[:32]
        return put_game(self.games_db.engine(), game, source=f"online:{game_id}", token=token,
                        collection="online")

    # -- players -----------------------------------------------------------------------------------

    def leaderboard(self, category: str, limit: int) -> dict[str, Any]:
        """The contract's leaderboard."""
        from xiangqi.online.ratings import PROVISIONAL_RD
        from xiangqi.study.rating import Rating

        rows = self.db.leaderboard(category, limit, PROVISIONAL_RD)
        return {"category": category, "players": [
            {"rank": i + 1, "user": {"id": r["user_id"], "username": r["username"], "kind": "user"},
             **rating_view(category, Rating(r["rating"], r["rd"], r["volatility"]), r["games"])}
            for i, r in enumerate(rows)]}

    def profile(self, username: str) -> dict[str, Any]:
        """The contract's player profile; 404 for an unknown name."""
        user = self.accounts.find(username)
        if user is None:
            raise OnlineError(f"no player named {username!r}", 404, "not_found")
        games = []
        stats = {"games": 0, "wins": 0, "losses": 0, "draws": 0}
        for g in self.db.games_of(user.id):
            color = "red" if g["red_user_id"] == user.id else "black"
            games.append(_summary_row(g, self.rooms.get(g["id"])))
            if g["status"] == "finished" and g["result"]:
                stats["games"] += 1
                if g["result"] == "1/2-1/2":
                    stats["draws"] += 1
                elif (g["result"] == "1-0") == (color == "red"):
                    stats["wins"] += 1
                else:
                    stats["losses"] += 1
        return {"user": {"id": user.id, "username": user.username, "kind": "user"},
                "created_at": iso(user.created_at), "ratings": self.ratings_view(user.id),
                "history": self.db.history(user.id), "games": games, "stats": stats}

    # -- sockets -----------------------------------------------------------------------------------

    def socket_opened(self, address: str) -> None:
        """Count an open WebSocket of ``address`` in this process; raises :class:`OnlineError` (429)
        past the limit."""
        n = self.sockets.get(address, 0)
        if n >= self.config.sockets_per_ip:
            raise OnlineError(f"too many open connections from {address}", 429, "rate_limited", 10)
        self.sockets[address] = n + 1

    async def socket_opened_async(self, address: str) -> None:
        """:meth:`socket_opened` counted over every process when Redis counts the limits (asked off
        the event loop: :class:`~xiangqi.online.limits.RedisSockets`)."""
        if self.redis_sockets is None:
            self.socket_opened(address)
            return
        if not await self.redis_sockets.opened(address, self.config.sockets_per_ip):
            raise OnlineError(f"too many open connections from {address}", 429, "rate_limited", 10)
        self.sockets[address] = self.sockets.get(address, 0) + 1

    def socket_closed(self, address: str) -> None:
        """That socket closed."""
        if self.redis_sockets is not None:
            self.redis_sockets.closed(address)  # (never waits)
        n = self.sockets.get(address, 0) - 1
        if n <= 0:
            self.sockets.pop(address, None)
        else:
            self.sockets[address] = n

    async def shutdown(self) -> None:
        """Cancel the service's tasks and close the database connections."""
        for t in list(self._tasks):
            t.cancel()
        for room in list(self.rooms.values()):
            for task in room._claim_tasks.values():
                task.cancel()
        if self.redis_limits is not None:
            await self.redis_sockets.aclose()
            await self.redis_limits.aclose()
        self.db.close()
        if self._db_pool is not None:
            self._db_pool.shutdown(wait=False, cancel_futures=True)
        self.engine.dispose()


def _summary_row(g: dict[str, Any], room: OnlineRoom | None) -> dict[str, Any]:
    if room is not None:
        out = room.summary()
    else:
        def seat(side: str) -> dict[str, Any]:
            kind = g[f"{side}_kind"]
            if kind == "user":
                return {"id": g[f"{side}_user_id"], "username": g[f"{side}_name"], "kind": "user"}
            return {"id": g[f"{side}_id"], "username": g[f"{side}_name"], "kind": kind}
        out = {"id": g["id"], "red": seat("red"), "black": seat("black"), "time_control": g["time_control"],
               "category": g["category"], "rated": bool(g["rated"]), "status": g["status"],
               "result": g["result"], "termination": g["termination"], "plies": g.get("plies", 0),
               "watchers": 0, "db_id": g["db_id"]}
    out["started_at"] = iso(g["created_at"])
    out["finished_at"] = iso(g["finished_at"])
    return out


__all__ += ["AccountError", "RateLimited"]
