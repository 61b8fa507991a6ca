"""The repetition rule in the tablebases (model ``cxa-check``): one-sided perpetual check (长将) loses.

KRKN (车 vs 马) is the smallest ending of the default set where the rule changes values (KPKP,
KCKP, KNKP and KRKP have no perpetual core: docs/TABLEBASES.md); it is generated once for the
module (about 20-30 s on the shared machine, the mate passes; the rule adds a few seconds).
"""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest
from tests.engine.tb_mate_search import mate_value

from xiangqi.cli import main
from xiangqi.core.board import Board, Move
from xiangqi.engine import tablebase as tb
from xiangqi.engine import tbgen

RULE = tb.RULE
CORE_FEN = "3R5/4k4/9/9/1n7/9/9/9/3K5/9 b"  # Black to move: every drawing move of the horse checks
BEFORE_FEN = "9/9/4k4/9/9/9/9/9/1n7/R2K5 w"  # Red to move: K d0-d1 forces Black into the perpetual


@pytest.fixture(scope="module")
def krkn(tmp_path_factory):
    d = tmp_path_factory.mktemp("krkn")
    header = tb.generate("KRKN", d)
    return d, header


def _pure(values):
    """The pure-mate values of a cxa-check table: its rule codes set back to draws."""
    out = values.copy()
    out[(np.abs(values.astype(np.int32)) >= RULE) & (values != tb.INVALID)] = 0
    return out


def _children(base, board):
    """``(move, child code, gives check)`` per legal move (codes through the core board)."""
    out = []
    for m in list(board.legal_moves):
        chk = board.gives_check(m)
        board.push(m, validate=False)
        out.append((m, base.value(board)[0], chk))
        board.pop()
    return out


def _quiet_back_into_core(base, board):
    """Side to move has a quiet move giving no check into a position lost by the rule in its core."""
    for m, v, chk in _children(base, board):
        if not chk and not board.is_capture(m) and v == -RULE:
            return True
    return False


def test_perpetual_check_loses_for_the_checker(krkn, capsys):
    """The pure-mate table called CORE_FEN a draw (every drawing move of the horse a check); with the
    rule Black loses, no DTM, in the core (0 plies to the perpetual)."""
    d, header = krkn
    assert header["rules"] == "cxa-check" and header["rule_layers"] >= 1
    base = tb.Tablebase(d)
    board = Board(CORE_FEN + " - - 0 1")
    assert base.value(board) == (-RULE, "KRKN")
    res = base.probe(board)
    assert (res.wdl, res.dtm, res.rule, res.rule_plies) == ("loss", None, "perpetual-check", 0)
    assert res.best == ["b5c3"] and board.gives_check(Move.from_iccs("b5c3"))
    # every move loses: the quiet ones by mate, the checks by the rule (Red answers quietly)
    for m, v, chk in _children(base, board):
        assert v > 0
        assert (v == RULE + 1) == chk, (m.iccs(), v)
    assert main(["tb", "probe", CORE_FEN + " - - 0 1", "--dir", str(d), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"wdl": "loss", "dtm": None, "best": ["b5c3"], "rule": "perpetual-check",
                   "rules": "cxa-check"}


def test_a_position_that_forces_its_way_in_changed_too(krkn):
    """BEFORE_FEN: no core itself (Black has not moved yet); Red wins by the rule in 1 ply, K d0-d1, a
    quiet move into the core. Pure mate called it a draw: Red cannot mate, Black's horse checks."""
    d, _ = krkn
    base = tb.Tablebase(d)
    board = Board(BEFORE_FEN + " - - 0 1")
    res = base.probe(board)
    assert (res.wdl, res.dtm, res.rule, res.rule_plies) == ("win", None, "perpetual-check", 1)
    assert res.best == ["d0d1"] and not board.gives_check(Move.from_iccs("d0d1"))
    assert mate_value(board, 5) == 0  # no short mate (the exhaustive search, no tables)
    values, _ = tb.load_values(d, "KRKN")
    end = tb.Ending.parse("KRKN")
    idx = tb.encode_py(end, [3, 67, 0, 10])  # Red K d0, Black K e7, R a0, n b1 (slot order K k R n)
    assert values[0, idx] == RULE + 1 and _pure(values)[0, idx] == 0
    board.push(Move.from_iccs("d0d1"))
    assert base.value(board) == (-RULE, "KRKN")


def test_every_rule_result_is_consistent(krkn):
    """Every position decided by the rule, probed through the core board with its children:
    lost in the core (d = 0): every child won for the opponent, and every check into a child won by
    the rule at 1 is answered by a quiet move (no check) back into the core; lost at d > 0: every
    child won for the opponent, by the rule at most d - 1 and once exactly d - 1; won at d: a child
    lost by the rule at d - 1, none nearer, no child lost by mate (the rule changes only draws).
    Draws (a sample): a drawn child, no child lost for the opponent."""
    d, header = krkn
    base = tb.Tablebase(d)
    end = tb.Ending.parse("KRKN")
    values, _ = tb.load_values(d, "KRKN")
    st = header["stats"]
    assert st["black"]["rule_losses"] == 1291 and st["red"]["rule_wins"] == 315
    assert st["red"]["rule_losses"] == st["black"]["rule_wins"] == 0
    rule_idx = np.argwhere((np.abs(values.astype(np.int32)) >= RULE) & (values != tb.INVALID))
    assert len(rule_idx) == 1291 + 315
    rng = random.Random(5)
    picks = [tuple(x) for x in rng.sample(list(rule_idx), 400)]
    draws = np.argwhere(values == 0)
    picks += [tuple(x) for x in rng.sample(list(draws), 150)]
    cores = 0
    for side, idx in picks:
        fen = tb.position_fen(end, int(idx), side == 0)
        board = Board(fen)
        code = int(values[side, idx])
        assert base.value(board) == (code, "KRKN")
        kids = _children(base, board)
        codes = [v for _, v, _ in kids]
        if code <= -RULE:
            dist = -code - RULE
            assert all(v > 0 for v in codes), fen
            rule_kids = [v - RULE for v in codes if v >= RULE]
            if dist == 0:
                cores += 1
                assert any(v == RULE + 1 and chk for _, v, chk in kids), fen
                for m, v, chk in kids:
                    if chk and v == RULE + 1:
                        board.push(m, validate=False)
                        assert _quiet_back_into_core(base, board), (fen, m.iccs())
                        board.pop()
            else:
                assert max(rule_kids) == dist - 1, fen
        elif code >= RULE:
            dist = code - RULE
            assert -(RULE + dist - 1) in codes, fen
            assert not any(-(RULE + dist - 1) < v <= -RULE for v in codes), fen
            assert not any(-RULE < v < 0 for v in codes), fen  # no mate
        else:
            assert code == 0 and 0 in codes and all(v >= 0 for v in codes), fen
    assert cores > 100


def test_rule_values_agree_with_the_search_probe(krkn):
    """tbgen.tb_code / tb_score (the search's probe) read the rule codes: a loss by the rule scores
    -(REP_WIN - ply - d), below every mate score; the stronger side Black is looked up turned round."""
    from xiangqi.engine.consts import MATE, MATE_BOUND, REP_WIN
    from xiangqi.engine.movegen import board_arrays

    d, _ = krkn
    tbv, tbd, names = tb.pack_tables(d)
    assert "KRKN" in names
    bd, _ks, turn = board_arrays(Board(CORE_FEN + " - - 0 1"))
    assert tbgen.tb_code(bd, turn, tbv, tbd) == -RULE
    assert tbgen.tb_score(bd, turn, 3, tbv, tbd, MATE) == -(REP_WIN - 3)
    bd, _ks, turn = board_arrays(Board(BEFORE_FEN + " - - 0 1"))
    s = tbgen.tb_score(bd, turn, 2, tbv, tbd, MATE)
    assert s == REP_WIN - 2 - 1 and s < MATE_BOUND
    # the colours turned round: Black's rook, Red's horse, Red to move in the core
    turned = Board("9/3k5/9/9/9/1N7/9/9/4K4/3r5 w - - 0 1")
    bd, _ks, turn = board_arrays(turned)
    assert tbgen.tb_code(bd, turn, tbv, tbd) == -RULE
    assert tb.Tablebase(d).value(turned) == (-RULE, "KRKN")


def test_engine_root_reports_a_rule_win(krkn):
    """The engine's root probe: the table's move (the quiet K d0-d1 into the core) and the score of a
    repetition won under the rules (REP_WIN centipawns, no mate); the verdict carries the rule."""
    from xiangqi.engine import Engine, Limit
    from xiangqi.engine.consts import REP_WIN

    d, _ = krkn
    eng = Engine(hash_mb=4)
    eng.set_tablebase_path(d)
    res = eng.search(Board(BEFORE_FEN + " - - 0 1"), Limit(depth=2))
    assert res.move.iccs() == "d0d1"
    assert (res.score_cp, res.mate) == (REP_WIN, None)
    assert res.tablebase == {"wdl": "win", "dtm": None, "ending": "KRKN", "rule": "perpetual-check"}


def test_old_model_files_load_and_are_upgraded(krkn, tmp_path):
    """A pure-mate file (the model of the tables generated before) still loads and probes as before
    (a draw); ``generate`` upgrades it in place by the rule passes alone, to the very values of a
    table generated with the rule; the mate values never change (pure mate = rule codes -> 0)."""
    d, header = krkn
    cxa, _ = tb.load_values(d, "KRKN")
    for n in ("KRK", "KNK"):
        shutil.copy(tb.table_path(d, n), tb.table_path(tmp_path, n))
    old = dict(header, rules="pure-mate", stats=tb.statistics(_pure(cxa)))
    np.savez_compressed(tb.table_path(tmp_path, "KRKN"), values=_pure(cxa), header=np.array(json.dumps(old)))
    base = tb.Tablebase(tmp_path)
    assert base.rules("KRKN") == "pure-mate"
    pr = base.probe(Board(CORE_FEN + " - - 0 1"))
    assert (pr.wdl, pr.dtm, pr.rule) == ("draw", None, None)
    h = tb.generate("KRKN", tmp_path)
    assert h["rules"] == "cxa-check" and h["upgraded_from"] == "pure-mate" and h["upgrade_seconds"] > 0
    up, _ = tb.load_values(tmp_path, "KRKN")
    assert np.array_equal(up, cxa)
    assert tb.Tablebase(tmp_path).rules("KRKN") == "cxa-check"
    assert h["stats"] == header["stats"]


def test_cli_rules_option_converts_between_models(krkn, tmp_path, capsys):
    """``xiangqi tb generate --rules pure-mate`` on a cxa-check file turns its rule results into draws
    in place (the table a fresh pure-mate generation gives: the test below), probes then say so in
    ``--json``; ``--rules cxa-check`` (the default) restores the rule table by the rule passes alone."""
    d, header = krkn
    cxa, _ = tb.load_values(d, "KRKN")
    for n in ("KRK", "KNK", "KRKN"):
        shutil.copy(tb.table_path(d, n), tb.table_path(tmp_path, n))
    assert main(["tb", "generate", "KRKN", "--rules", "pure-mate", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("KRKN (pure-mate): 874,800 indices, red to move 230988/366/663")
    assert "results by the repetition rule become draws" in out.err and "perpetual-check rule" not in out.out
    pure, h = tb.load_values(tmp_path, "KRKN")
    assert np.array_equal(pure, _pure(cxa)) and not np.array_equal(pure, cxa)
    assert h["rules"] == "pure-mate" and h["downgraded_from"] == "cxa-check" and "rule_core" not in h
    assert h["stats"] == tb.statistics(_pure(cxa)) and h["stats"]["black"]["rule_losses"] == 0
    assert main(["tb", "probe", CORE_FEN + " - - 0 1", "--dir", str(tmp_path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["wdl"], got["rule"], got["rules"]) == ("draw", None, "pure-mate")
    assert main(["tb", "generate", "KRKN", "--dir", str(tmp_path)]) == 0
    assert "KRKN (cxa-check)" in capsys.readouterr().out
    up, h2 = tb.load_values(tmp_path, "KRKN")
    assert np.array_equal(up, cxa) and h2["upgraded_from"] == "pure-mate" and "downgraded_from" not in h2
    assert h2["stats"] == header["stats"]
    with pytest.raises(SystemExit):
        main(["tb", "generate", "KRKN", "--rules", "axf"])
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.slow
def test_pure_mate_generation_is_the_rule_table_without_rule_codes(krkn, tmp_path):
    """Generated afresh with ``rules="pure-mate"`` (the scheme before the rule), KRKN equals the
    cxa-check table with its rule codes set to draws, and the independent pure-Python listing
    ``perpetual_check_draws`` (drawn positions whose draw rests on one-sided perpetual check) finds
    only positions that the generator marked lost by the rule (it follows no mirror images, so
    it finds a few fewer: 1,285 of the generator's 1,291 cores)."""
    d, _ = krkn
    h = tb.generate("KRKN", tmp_path, rules="pure-mate")
    assert h["rules"] == "pure-mate"
    pure, _ = tb.load_values(tmp_path, "KRKN")
    cxa, _ = tb.load_values(d, "KRKN")
    assert np.array_equal(pure, _pure(cxa))
    listed = tb.perpetual_check_draws(tmp_path, "KRKN")
    assert CORE_FEN in listed and len(listed) == 1285
    base = tb.Tablebase(d)
    for key in listed:
        assert base.value(Board(key + " - - 0 1"))[0] == -RULE, key


def test_trainer_ends_a_rule_win_by_the_referee(krkn):
    """Endgame practice from a position won by the rule: the defender keeps checking, the player
    answers quietly, and the core referee rules the repetition: Black perpetually checks, Red wins."""
    from xiangqi.app.training.endgames import EndgameTrainer

    d, _ = krkn
    trainer = EndgameTrainer(d, seed=1)
    view = trainer.start(fen=BEFORE_FEN + " - - 0 1")
    sid = view["session"]
    assert trainer.dtm(sid) == {"wdl": "win", "dtm": None, "mate_in": None, "best": ["d0d1"],
                                "rule": "perpetual-check"}
    base = tb.Tablebase(d)
    for _ in range(30):
        board = Board(view["fen"])
        move = sorted(base.probe(board).best)[0]
        view = trainer.move(sid, move)
        if view["over"]:
            break
        assert view["verdict"] == "win"
        assert Board(view["fen"]).is_check()  # the horse's answer is a check
    assert (view["over"], view["verdict"]) == ("perpetual", "win")
    assert Board(view["start_fen"]).turn  # the player is Red
    # a random start is a win by mate, never one by the rule
    for _ in range(5):
        b = trainer.random_position("KRKN")
        code = base.value(b)[0]
        assert 0 < code < RULE
