"""The coach's API (xiangqi.web.coach_api): the rating after a rated game, in the state and the
profile; coach mode and the adaptive level in a new game; unrated games say why."""

from __future__ import annotations

import pytest
from tests.webclient import api_client

from xiangqi.core.board import Board
from xiangqi.engine.levels import LEVELS
from xiangqi.study import rating as glicko
from xiangqi.web.server import create_app


def first_move(board: Board, level: str):
    return min(board.legal_moves, key=lambda m: m.iccs())


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path, move_provider=first_move, warmup=False, engine_delay_s=0)
    with api_client(app) as c:
        c.app_ref = app
        yield c


def play_and_resign(client, **body) -> dict:
    r = client.post("/api/coach/new", json={"red": "human", "black": "engine", "level": "beginner", **body})
    assert r.status_code == 200, r.text
    assert client.post("/api/game/move", json={"move": "h2e2"}).status_code == 200
    run_idle(client)
    r = client.post("/api/game/resign")
    assert r.status_code == 200, r.text
    return r.json()


def run_idle(client) -> None:
    from tests.webclient import run_coroutine

    run_coroutine(client.app_ref.state.hub.wait_idle())


def test_rated_game_changes_the_rating(client) -> None:
    p0 = client.get("/api/coach/profile").json()
    assert (p0["rating"], p0["rd"], p0["games"], p0["rank"], p0["history"], p0["recent"]) == \
        (1500, 350, 0, "常侍", [], [])
    st = play_and_resign(client)
    c = st["coach"]
    lv = LEVELS["beginner"]
    expect = glicko.update(glicko.Rating(), [glicko.Result(lv.elo, lv.elo_error / 1.96, 0)])
    assert c["rated"] is True and c["reason"] is None and c["mode"] is False
    assert c["rating"]["before"] == 1500 and c["rating"]["after"] == round(expect.rating)
    assert c["rating"]["delta"] == round(expect.rating) - 1500 < 0
    assert c["rating"]["rank"] == glicko_rank(expect.rating)
    p = client.get("/api/coach/profile").json()
    assert p["games"] == 1 and p["rating"] == pytest.approx(expect.rating, abs=0.1)
    assert len(p["history"]) == 1 and p["history"][0]["level"] == "beginner"
    assert p["history"][0]["score"] == 0 and p["recent"][0]["library_id"] is not None
    # 悔棋 after the end: the result is taken back, the game unrated, the rating as before
    st = client.post("/api/game/undo").json()
    assert st["coach"]["rated"] is False and st["coach"]["reason"] == "takeback"
    assert st["coach"]["rating"] is None and st["coach"]["undos"] == 1
    assert client.get("/api/coach/profile").json()["games"] == 0


def glicko_rank(r: float) -> str:
    from xiangqi.engine.levels import rank_name

    return rank_name(r)


def test_coach_mode_game_is_unrated(client) -> None:
    st = play_and_resign(client, coach=True)
    assert st["coach"]["mode"] is True and st["coach"]["rated"] is False
    assert st["coach"]["reason"] == "coach" and st["coach"]["rating"] is None
    assert client.get("/api/coach/profile").json()["games"] == 0


def test_hint_makes_the_game_unrated(client) -> None:
    client.post("/api/coach/new", json={"level": "beginner"})
    assert client.get("/api/game").json()["coach"]["rated"] is True
    r = client.post("/api/game/hint")
    assert r.status_code == 200, r.text
    assert r.json()["line"] and all(isinstance(x, str) for x in r.json()["line"])
    st = client.get("/api/game").json()
    assert st["coach"]["reason"] == "hint" and st["coach"]["hints"] == 1


def test_adaptive_new_game(client) -> None:
    r = client.post("/api/coach/new", json={"level": "adaptive"})
    assert r.status_code == 200, r.text
    st = r.json()
    a = st["coach"]["adaptive"]
    assert st["level"] == "adaptive" and a["elo"] == 1500 and a["between"] == ["beginner", "intermediate"]
    assert st["coach"]["rated"] is True
    # the level actually played is stored with the game
    assert {**client.app_ref.state.store.load_current().extras["adaptive"], "rank": "常侍"} == a


def test_bad_requests(client) -> None:
    assert client.post("/api/coach/new", json={"level": "godlike"}).status_code == 422
    assert client.post("/api/coach/new", json={"coach": "yes please"}).status_code == 422
    assert client.post("/api/coach/new", json={"colour": "red"}).status_code == 422
    r = client.post("/api/coach/new", json={"fen": "9/9/9/9/9/9/9/9/9/9 w - - 0 1"})
    assert r.status_code == 400


HANGING = "5k3/2n6/9/9/9/9/9/9/9/1R2K4 w - - 0 1"


def wait_note(client, limit_s: float = 90.0) -> dict:
    import time

    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        st = client.get("/api/game").json()
        if st["coach"]["note"] is not None and st["coach"]["checking"] is None:
            return st
        time.sleep(0.05)
    raise AssertionError("the coach said nothing")


def test_coach_warns_and_takes_back(client) -> None:
    r = client.post("/api/coach/new", json={"level": "beginner", "coach": True, "fen": HANGING})
    assert r.status_code == 200 and r.json()["coach"]["mode"] is True
    client.post("/api/game/move", json={"move": "b0b6"})
    st = wait_note(client)
    note = st["coach"]["note"]
    assert note["ply"] == 1 and note["warn"] is True and note["text_zh"] == "这步丢车：对方 马3进2 吃车"
    run_idle(client)
    assert len(client.get("/api/game").json()["moves"]) == 2  # the computer replied meanwhile
    assert client.post("/api/coach/takeback", json={"ply": 2}).status_code == 409
    r = client.post("/api/coach/takeback", json={"ply": 1})
    assert r.status_code == 200, r.text
    st = r.json()
    assert st["moves"] == [] and st["coach"]["coach_takebacks"] == 1 and st["coach"]["undos"] == 0
    assert st["coach"]["note"] is None
    assert client.post("/api/coach/takeback", json={"ply": 1}).status_code == 409  # once
    # a good move: a word that is no warning, and nothing to take back
    client.post("/api/game/move", json={"move": "b0b2"})
    st = wait_note(client)
    assert st["coach"]["note"]["warn"] is False
    assert client.post("/api/coach/takeback", json={"ply": 1}).status_code == 409


def test_no_coach_word_without_coach_mode(client) -> None:
    coach = client.app.state.hub.coach
    judged = []  # the coach's judgements started (the only way to a word, besides a check)
    real_judge = coach._judge

    def judge(*args):
        judged.append(args)
        return real_judge(*args)

    coach._judge = judge
    client.post("/api/coach/new", json={"level": "beginner", "fen": HANGING})
    client.post("/api/game/move", json={"move": "b0b6"})  # (the coach hears of it before the answer)
    assert judged == [] and coach.prechecked is None
    c = client.get("/api/game").json()["coach"]
    assert c["note"] is None and c["checking"] is None


def test_threat(client) -> None:
    client.post("/api/coach/new", json={"level": "beginner", "fen": "5k3/2n6/9/1R7/9/9/9/9/9/4K4 w - - 0 1"})
    r = client.post("/api/coach/threat")
    assert r.status_code == 200, r.text
    th = r.json()
    assert th["move"] == "c8b6" and th["text_zh"] == "对方威胁：马3进2 吃车"
    assert th["text_en"] == "The opponent threatens 马3进2, taking the rook"
    assert client.get("/api/game").json()["coach"]["reason"] in ("not_start_position", "hint")
    client.post("/api/coach/new", json={"level": "beginner"})
    client.post("/api/coach/threat")
    assert client.get("/api/game").json()["coach"]["reason"] == "hint"
    assert client.post("/api/coach/takeback", json={"ply": "one"}).status_code == 422
    assert client.post("/api/coach/takeback", json={"ply": 0}).status_code == 422


def test_coach_checks_a_move_before_it_is_sent(client) -> None:
    """POST /api/coach/check: the word on a move before it is played (nothing is played), kept as the
    move's note when that move then comes (no second search)."""
    client.post("/api/coach/new", json={"level": "beginner", "coach": True, "fen": HANGING})
    r = client.post("/api/coach/check", json={"move": "b0b6"})
    assert r.status_code == 200, r.text
    note = r.json()
    assert note["warn"] is True and note["ply"] == 1 and note["text_zh"] == "这步丢车：对方 马3进2 吃车"
    assert client.get("/api/game").json()["moves"] == []  # only asked: nothing played
    safe = client.post("/api/coach/check", json={"move": "b0b2"}).json()
    assert safe["warn"] is False
    client.app_ref.state.hub.coach.prechecked = (client.get("/api/game").json()["id"], 1,
                                                 {**note, "text_zh": "kept"})
    client.post("/api/game/move", json={"move": "b0b6"})
    st = client.get("/api/game").json()
    assert st["coach"]["note"]["text_zh"] == "kept" and st["coach"]["checking"] is None
    assert client.post("/api/coach/check", json={"move": "zz99"}).status_code == 400
    run_idle(client)
    client.post("/api/coach/new", json={"level": "beginner", "fen": HANGING})  # no coach mode
    off = client.post("/api/coach/check", json={"move": "b0b6"})
    assert off.status_code == 409 and "coach mode is off" in off.json()["detail"]
    client.post("/api/coach/new", json={"level": "beginner", "coach": True, "fen": HANGING})
    bad = client.post("/api/coach/check", json={"move": "b0c1"})  # a rook does not move diagonally
    assert bad.status_code == 400
