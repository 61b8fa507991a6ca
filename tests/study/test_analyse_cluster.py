"""``xiangqi analyse`` at scale: a real Dask LocalCluster gives the local run's output; the JSON lines'
schema and determinism; the progress display (rich on a terminal, plain lines otherwise)."""

from __future__ import annotations

import io
import json

import pytest

from xiangqi.cli import main
from xiangqi.core.board import Board, Move
from xiangqi.core.errors import XiangqiError
from xiangqi.core.pgn import Game, write_game
from xiangqi.study import analyse
from xiangqi.study import review as rv

distributed = pytest.importorskip("distributed")

# Red: king e0, rook b0; Black: king f9, horse c8. b0b6 leaves the rook where the horse takes it.
HANGING = "5k3/2n6/9/9/9/9/9/9/9/1R2K4 w - - 0 1"


def _game(fen: str, moves: list[str]) -> Game:
    g = Game()
    g.setup(fen)
    node = g
    for m in moves:
        node = node.add_variation(Move.from_iccs(m))
    return g


GAMES = [_game(HANGING, ["b0b6", "c8b6"]), _game(Board().fen(), ["h2e2", "h9g7", "h0g2"]),
         _game(Board().fen(), ["c3c4", "g6g5", "b2c2"])]


@pytest.fixture()
def three_games(tmp_path):
    path = tmp_path / "three.pgn"
    path.write_text("\n".join(write_game(g) for g in GAMES), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None) as c:
        yield c


def test_cluster_output_equals_the_local_run(three_games, cluster, capsys) -> None:
    addr = cluster.scheduler_address
    assert addr.startswith("tcp://127.0.0.1:")
    assert main(["analyse", str(three_games), "--depth", "3", "--json", "-q", "--cluster", addr]) == 0
    on_cluster, err = capsys.readouterr()
    assert main(["analyse", str(three_games), "--depth", "3", "--json", "-q", "--confirm", "0"]) == 0
    local = capsys.readouterr().out
    assert on_cluster == local
    lines = [json.loads(s) for s in local.splitlines()]
    assert [d["game"] for d in lines] == [1, 2, 3]
    assert lines[0]["plies"][0]["class"] == "blunder"
    assert "Red acc" in err


def test_review_on_cluster_keeps_the_order_with_one_game_per_task(cluster) -> None:
    from distributed import Client

    seen = []
    with Client(cluster.scheduler_address) as client:
        got = list(analyse.review_on_cluster(GAMES, client, depth=2, games_per_task=1, in_flight=2,
                                             on_progress=lambda d, t: seen.append((d, t))))
    serial = list(rv.review_games(GAMES, depth=2))
    assert [r.to_dict() for r in got] == [r.to_dict() for r in serial]
    assert seen[-1] == (11, 11) and [t for _, t in seen] == [11, 11, 11]
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) == 3


def test_a_cluster_that_does_not_answer_is_one_clear_error(three_games) -> None:
    with pytest.raises(XiangqiError, match="cannot connect to the Dask cluster at 'tcp://127.0.0.1:9'"):
        analyse.run(str(three_games), depth=1, quiet=True, cluster="tcp://127.0.0.1:9", cluster_timeout_s=1)
    with pytest.raises(XiangqiError, match="scheduler address such as tcp://HOST:8786"):
        analyse.run(str(three_games), depth=1, quiet=True, cluster="127.0.0.1:8786")


def test_json_lines_have_the_issue_schema_and_are_deterministic(three_games, capsys) -> None:
    runs = []
    for _ in range(2):
        assert main(["analyse", str(three_games), "--depth", "2", "--json", "-q"]) == 0
        runs.append(capsys.readouterr().out)
    assert runs[0] == runs[1]
    for line in runs[0].splitlines():
        d = json.loads(line)
        assert set(d["accuracy"]) == {"red", "black"}
        assert all(isinstance(v, float) and 0 <= v <= 100 for v in d["accuracy"].values())
        for i, p in enumerate(d["plies"], 1):
            assert {"ply", "move", "eval", "best", "class"} <= set(p)
            assert p["ply"] == i and isinstance(p["eval"], int) and p["class"] in rv.CLASSES
            assert len(p["move"]) == 4 and len(p["best"]) == 4


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_rich_on_a_terminal_and_plain_lines_otherwise() -> None:
    assert analyse.make_progress(10, io.StringIO(), quiet=True) is None
    plain = io.StringIO()
    bar = analyse.make_progress(10, plain)
    assert isinstance(bar, analyse.Progress)
    bar.update(10, 10)
    bar.close()
    assert "10/10 positions" in plain.getvalue() and "\x1b" not in plain.getvalue()
    tty = _Tty()
    bar = analyse.make_progress(12, tty)
    assert isinstance(bar, analyse.RichProgress)
    for n in range(1, 13):
        bar.update(n, 12)
    bar.close()
    text = tty.getvalue()
    assert "12/12" in text and "positions" in text and "100%" in text
