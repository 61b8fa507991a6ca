"""Endgame tablebases: index, generator consistency, DTM against an exhaustive search, known results,
probing and the ``xiangqi tb`` commands.

Known results checked (sources):
* 车 vs bare king wins; single 炮 vs bare king cannot win; 马 vs bare king is a sure win
  ("one horse versus a solitary king is a sure win situation", xqinenglish.com,
  The Anatomy of the Xiangqi part 4, http://www.xqinenglish.com/theanatomyofxiangqipart4.html).
* 兵 vs bare king: "a lone pawn wins as long as it is high enough to move in and trap" the king
  (B. Brydon, MSO Mind Sports Zine 2000,
  http://www.msoworld.com/mindzine/news/orient/xiangqi/xq1.html); a bottom-rank pawn (底兵) cannot.
* 车 vs 士象全: "单车例和士象全" — a book draw when the advisors and elephants stand linked on
  the centre file, a win when they do not (g230.com/569493922.html); slow test.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from tests.engine.tb_mate_search import mate_value

from xiangqi.cli import main
from xiangqi.core.board import Board, grid_board_fen
from xiangqi.engine import tablebase as tb
from xiangqi.engine import tbgen

# KPKP: a capture of a pawn leaves KPK with the colours swapped (the kernel's flip path)
SMALL = ("KRK", "KNK", "KCK", "KPK", "KRKA", "KPKP")


@pytest.fixture(scope="module")
def tbdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("tb")
    for name in SMALL:
        tb.generate(name, d)
    return d


def _layout(end):
    return tb._layouts([end])


def _squares(end, idx):
    ng, gs, gc, gl, rd, _ = _layout(end)
    sq = np.zeros(len(end.slots()), np.int64)
    tbgen.decode(0, idx, sq, ng, gs, gc, gl, rd)
    return [int(s) for s in sq]


def _board(end, sqs, red_to_move):
    grid = [None] * 90
    for code, s in zip(end.slots(), sqs, strict=True):
        grid[s] = " kabnrcp"[abs(code)].upper() if code > 0 else " kabnrcp"[abs(code)]
    return Board(f"{grid_board_fen(grid)} {'w' if red_to_move else 'b'} - - 0 1")


def _legal_samples(end, values, n, seed):
    rng = random.Random(seed)
    legal = np.argwhere(values != tb.INVALID)
    picks = [legal[i] for i in rng.sample(range(len(legal)), min(n, len(legal)))]
    return [(int(s), int(i)) for s, i in picks]


def test_ending_names():
    assert tb.Ending.parse("khke").name == "KNKB"
    assert tb.Ending.parse("KAKR").name == "KRKA"  # the stronger side goes first
    assert tb.Ending.parse("KPNKAA").name == "KNPKAA"
    assert tb.Ending.parse("KRKAABB").size() == 6 * 9 * 90 * 10 * 21
    for bad in ("KRX", "RK", "KRKAAA", "KAKB", "KRRRKA"):
        with pytest.raises(tb.TablebaseError):
            tb.Ending.parse(bad)
    # capturing the rook leaves K+A against K: a draw, no table; capturing the advisor leaves KRK
    caps = tb.Ending.parse("KRKA").captures()
    assert caps[2][0] is None and caps[3][0] == "KRK"
    # 马 captured in KNKP: the pawn side is the stronger one, colours swap
    name, flipped, _ = tb.Ending.parse("KNKP").captures()[2]
    assert (name, flipped) == ("KPK", True)


def test_index_round_trip():
    rng = random.Random(1)
    for name in ("KRK", "KNPKAA", "KRKAABB", "KPPKB"):
        end = tb.Ending.parse(name)
        ng, gs, gc, gl, rd, _ = _layout(end)
        scratch = np.zeros(8, np.int64)
        for _ in range(300):
            idx = rng.randrange(end.size())
            sqs = _squares(end, idx)
            assert tb.encode_py(end, sqs) == idx
            assert tb.decode_py(end, idx) == sqs  # the pure-Python inverse agrees with the kernel's
            fen = tb.position_fen(end, idx)
            assert (fen is None) == (len(set(sqs)) != len(sqs))
            if fen is not None:
                assert fen == _board(end, sqs, True).fen().replace(" - - 0 1", "") + " - - 0 1"
            assert tbgen.encode(0, np.array(sqs, np.int64), ng, gs, gc, gl, rd, scratch) == idx
            mirrored = [s - s % 9 + 8 - s % 9 for s in sqs]
            if sqs[0] % 9 != 4:  # left-right mirror shares the index (Red king off the centre file)
                assert tb.encode_py(end, mirrored) == idx


def test_statistics_and_known_results(tbdir):
    st = {n: tb.load_values(tbdir, n)[1]["stats"] for n in SMALL}
    for n in ("KRK", "KNK", "KRKA"):  # the stronger side to move always wins
        assert st[n]["red"]["wins"] == st[n]["red"]["positions"] > 0
        assert st[n]["red"]["draws"] == st[n]["red"]["losses"] == 0
    # single cannon: not one win, not even a stalemate of the bare king
    assert st["KCK"]["red"]["draws"] == st["KCK"]["red"]["positions"]
    assert st["KCK"]["black"]["draws"] == st["KCK"]["black"]["positions"]
    # the bare king to move draws only by taking the rook
    end = tb.Ending.parse("KRK")
    values = tb.load_values(tbdir, "KRK")[0]
    for idx in np.flatnonzero(values[1] == 0):
        board = _board(end, _squares(end, int(idx)), False)
        assert any(board.is_capture(m) for m in board.legal_moves)
    # the pawn: wins from every square but the last rank, never from it
    end = tb.Ending.parse("KPK")
    values = tb.load_values(tbdir, "KPK")[0]
    for idx in np.flatnonzero(values[0] != tb.INVALID):
        pawn_rank = _squares(end, int(idx))[2] // 9
        assert (values[0, idx] > 0) == (pawn_rank < 9), (idx, pawn_rank)


@pytest.mark.parametrize("name", SMALL)
def test_every_child_is_consistent(tbdir, name):
    """A win has a child lost at DTM-1 and none shorter; a loss has every child won, one at DTM-1;
    a draw has a drawn child and no lost one. The children are probed through the core board."""
    end = tb.Ending.parse(name)
    values = tb.load_values(tbdir, name)[0]
    base = tb.Tablebase(tbdir)
    for side, idx in _legal_samples(end, values, 1500, seed=hash(name) % 1000):
        code = int(values[side, idx])
        board = _board(end, _squares(end, idx), side == 0)
        assert base.value(board) == (code, name)
        kids = []
        for m in list(board.legal_moves):
            board.push(m, validate=False)
            kids.append(base.value(board)[0])
            board.pop()
        assert tb.INVALID not in kids
        if tb.is_rule_code(code):  # by the repetition rule: tests/engine/test_tablebase_rules.py
            assert all(k > 0 for k in kids) if code < 0 else -(code - 1) in kids
        elif code > 0:
            assert -code in kids and all(not (-code < k < 0) for k in kids)
        elif code < 0:
            dtm = -code - 1
            assert all(0 < k <= dtm - 1 for k in kids) and (dtm == 0 or dtm - 1 in kids)
            assert (dtm == 0) == (kids == [])
        else:
            assert 0 in kids and all(k >= 0 for k in kids)


@pytest.mark.parametrize(("name", "depth"),
                         [("KRK", 7), ("KNK", 9), ("KPK", 9), ("KRKA", 7), ("KCK", 5), ("KPKP", 7)])
def test_dtm_agrees_with_exhaustive_search(tbdir, name, depth):
    """Random positions plus positions with short mates: the search and the table give the same code
    whenever the mate is within ``depth`` plies; beyond it the search finds nothing."""
    end = tb.Ending.parse(name)
    values = tb.load_values(tbdir, name)[0]
    picks = _legal_samples(end, values, 1200, seed=7)
    mag = np.abs(values.astype(np.int32))
    short = np.argwhere((values != tb.INVALID) & (mag <= depth + 1) & (values != 0))
    rng = random.Random(3)
    picks += [(int(s), int(i)) for s, i in rng.sample(list(short), min(800, len(short)))]
    checked_mates = 0
    for side, idx in picks:
        code = int(values[side, idx])
        board = _board(end, _squares(end, idx), side == 0)
        found = mate_value(board, depth)
        dtm = None if tb.is_rule_code(code) else code if code > 0 else (-code - 1 if code < 0 else None)
        if dtm is not None and dtm <= depth:
            assert found == code, (board.fen(), code, found)
            checked_mates += 1
        else:
            assert found == 0, (board.fen(), code, found)
    if name != "KCK":
        assert checked_mates > 300


def test_kernel_file_in_cache_hash():
    from xiangqi.engine import _numba

    assert "tbgen.py" in _numba._KERNEL_FILES


def test_probe_and_best_moves(tbdir):
    base = tb.Tablebase(tbdir)
    res = base.probe(Board("3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1"))
    assert (res.wdl, res.dtm, res.ending) == ("win", 1, "KRK")
    assert sorted(res.best) == ["e1d1", "e1e8"]
    # the stronger side Black: the board is turned round
    res = base.probe(Board("4k4/4r4/9/9/9/9/9/9/9/3K5 b - - 0 1"))
    assert res.wdl == "win" and res.ending == "KRK" and "e8d8" in res.best
    lost = base.probe(Board("4k4/4r4/9/9/9/9/9/9/9/3K5 w - - 0 1"))
    assert lost.wdl == "loss" and lost.dtm % 2 == 0 and lost.best
    assert base.probe(Board("4k4/9/9/9/9/9/9/9/9/3K1C3 w - - 0 1")).wdl == "draw"
    assert base.probe(Board("4k4/9/9/9/9/9/9/9/9/3KRR3 w - - 0 1")) is None  # no KRRK table
    assert base.probe(Board()) is None


def test_cli_generate_and_probe(tbdir, tmp_path, capsys, monkeypatch):
    assert main(["tb", "probe", "3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1", "--dir", str(tbdir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["wdl"] == "win" and out["dtm"] == 1 and sorted(out["best"]) == ["e1d1", "e1e8"]
    assert main(["tb", "probe", "4k4/9/9/9/9/9/9/9/9/3KRR3 w - - 0 1", "--dir", str(tbdir)]) == 1
    assert "not in the tables" in capsys.readouterr().err
    monkeypatch.setenv("XIANGQI_DATA_DIR", str(tmp_path))
    assert main(["tb", "generate", "kck"]) == 0
    out = capsys.readouterr()
    assert (tmp_path / "tablebases" / "KCK.npz").exists()
    assert out.out.startswith("KCK (cxa-check):") and "pass 1" in out.err
    assert main(["tb", "generate", "KXK"]) == 2
    assert "bad ending" in capsys.readouterr().err


@pytest.mark.slow
def test_rook_against_full_defence(tmp_path):
    """KRKAABB: the rook wins wherever the defence is not linked, draws otherwise (单车例和士象全)."""
    h = tb.generate("KRKAABB", tmp_path)
    red = h["stats"]["red"]
    assert red["wins"] > 0 and red["draws"] > 0 and red["losses"] == 0
    base = tb.Tablebase(tmp_path)
    # the linked defence (士象 on the centre file, king at home): a draw
    assert base.probe(Board("2bakab2/9/9/9/9/9/9/9/9/R2K5 w - - 0 1")).wdl == "draw"


def _long_win(tbdir, name, min_dtm):
    """A Red-to-move position of ``name`` won in at least ``min_dtm`` plies (the first in index order)."""
    end = tb.Ending.parse(name)
    values, _ = tb.load_values(tbdir, name)
    idx = int(np.argmax((values[0] >= min_dtm) & (values[0] != tb.INVALID)))
    assert values[0, idx] >= min_dtm
    return _board(end, _squares(end, idx), True), int(values[0, idx])


def test_engine_probes_the_root(tbdir):
    from xiangqi.engine import Engine, Limit

    board, dtm = _long_win(tbdir, "KRKA", 9)
    eng = Engine(hash_mb=1)
    plain = eng.search(board, Limit(depth=1))
    assert plain.tablebase is None and plain.mate is None  # depth 1 cannot see a mate 9 plies away
    assert eng.set_tablebase_path(tbdir) == sorted(tb.Tablebase(tbdir).available())
    res = eng.search(board, Limit(depth=1))
    best = tb.Tablebase(tbdir).probe(board).best
    assert res.move.iccs() in best  # one of the fastest mates
    assert res.tablebase == {"wdl": "win", "dtm": dtm, "ending": "KRKA"}
    assert res.mate == (dtm + 1) // 2 and res.score_cp is None
    # the side that loses: the longest resistance, mated in dtm plies
    b = board.copy()
    b.push(res.move)
    lost = eng.search(b, Limit(depth=2))
    assert lost.tablebase["wdl"] == "loss" and lost.tablebase["dtm"] == dtm - 1
    assert lost.mate == -((dtm - 1) // 2)
    # a drawn ending (炮 alone cannot mate) scores 0; a position with no table searches as usual
    draw = eng.search(Board("4k4/9/9/9/9/9/9/9/9/3K1C3 w - - 0 1"), Limit(depth=2))
    assert draw.tablebase["wdl"] == "draw" and (draw.score_cp, draw.mate) == (0, None)
    assert eng.search(Board(), Limit(depth=1)).tablebase is None
    eng.set_tablebase_path(None)
    assert eng.search(board, Limit(depth=1)).tablebase is None


def test_uci_tablebase_path_option(tbdir):
    from xiangqi.engine.uci.server import EngineServer

    board, dtm = _long_win(tbdir, "KRKA", 9)
    out: list[str] = []
    server = EngineServer(write=out.append, warmup=lambda: None)
    server.handle("uci")
    assert "option name TablebasePath type string default <empty>" in out
    server.handle(f"setoption name TablebasePath value {tbdir}")
    assert any(x.startswith(f"info string tablebases in {tbdir}: ") and "KRKA" in x for x in out)
    server.handle(f"position fen {board.fen()}")
    server.handle("go depth 1")
    server.wait(60)
    assert f"info string tablebase KRKA: win for the side to move, mate in {dtm} plies" in out
    move = next(x for x in out if x.startswith("bestmove")).split()[1]
    assert move in tb.Tablebase(tbdir).probe(board).best


@pytest.mark.parametrize("name", ["KRKA", "KPKB", pytest.param("KNKA", marks=pytest.mark.slow),
                                  pytest.param("KPKP", marks=pytest.mark.slow),
                                  pytest.param("KRKN", marks=pytest.mark.slow)])
def test_retro_generation_equals_forward_scan(tmp_path, name):
    """Un-move generation examines fewer positions but must give the forward scan's values exactly
    (KRKA: rook and king un-moves; KPKB: pawn un-moves; KNKA: horse un-moves, 38-ply mates; KPKP:
    captures into a colour-swapped sub-ending; KRKN: wins for both sides; the last three take
    5-40 s, mostly the forward scan)."""
    fwd, ret = tmp_path / "f", tmp_path / "r"
    hf = tb.generate(name, fwd, method="forward")
    hr = tb.generate(name, ret, method="retro")
    assert hr["method"] == "retro" and hf["method"] == "forward"
    assert np.array_equal(tb.load_values(fwd, name)[0], tb.load_values(ret, name)[0])
    assert hr["stats"] == hf["stats"] and hr["passes"] == hf["passes"]


@pytest.mark.parametrize("name", ["KRKA", "KPKB", "KNKA", pytest.param("KPKP", marks=pytest.mark.slow),
                                  pytest.param("KCPK", marks=pytest.mark.slow)])
def test_counter_generation_equals_retro(tmp_path, name):
    """The counter method (the default: pass 0 counts each position's children, a loss pass only
    decrements counters through exact un-moves, no move generation) gives the un-move method's
    values, statistics and number of passes exactly (KNKA: 38-ply mates through horse un-moves and
    the mirror images of the centre-file king; KPKP: captures into a colour-swapped sub-ending,
    wins for both sides; KCPK: the cannon's captures over a screen, 20-ply mates)."""
    cnt, ret = tmp_path / "c", tmp_path / "r"
    hc = tb.generate(name, cnt)
    hr = tb.generate(name, ret, method="retro")
    assert hc["method"] == "count" and hr["method"] == "retro"
    for sub in [name, *tb.Ending.parse(name).sub_endings()]:
        assert np.array_equal(tb.load_values(cnt, sub)[0], tb.load_values(ret, sub)[0]), sub
    assert hc["stats"] == hr["stats"] and hc["passes"] == hr["passes"]


def test_counter_generation_refuses_triggers_beyond_the_packed_layout(tmp_path, monkeypatch):
    """The packed table holds capture triggers up to 255 (a sub-table mating in at most 254 plies):
    beyond it the counter method refuses the ending with a clear error instead of wrong values
    (forced here on KRKA by lowering the limit to the longest mate of its sub-table KRK)."""
    st = tb.generate("KRK", tmp_path)["stats"]
    m = max(st["red"]["longest_dtm"], st["black"]["longest_dtm"])
    assert m > 0
    monkeypatch.setattr(tb, "_TRIG_MAX", m)
    with pytest.raises(tb.TablebaseError, match=f"capture triggers up to {m}"):
        tb.generate("KRKA", tmp_path)
    monkeypatch.setattr(tb, "_TRIG_MAX", m + 2)  # the largest code of KRK: m or m + 1 (a loss)
    assert tb.generate("KRKA", tmp_path)["passes"] > 0


def test_counter_bound_and_measured_counters(tmp_path):
    """The counter bound (the most quiet moves of a side plus one) is within the packed layout's
    63 for every ending of the default set, and pass 0's largest counter stays below it."""
    bounds = {n: tb.counter_bound(tb.Ending.parse(n)) for n in tb.default_set()}
    assert max(bounds.values()) == 39 and bounds["KRRKRABB"] == 39  # 17 + 17 + 4 + 1
    assert bounds["KRK"] == 22 and bounds["KPK"] == 8
    h = tb.generate("KRKA", tmp_path)
    assert 0 < h["max_counter"] <= bounds["KRKA"]
    assert h["max_counter"] == 21  # the rook's 17 quiet moves on an open rank and file, the king's 4


@pytest.mark.parametrize("phase", ["pass0", "mate", "rules", "rules-round"])
def test_generation_resumes_from_a_checkpoint(tmp_path, monkeypatch, phase):
    """A generation stopped after a checkpoint (here by a KeyboardInterrupt from the test hook, as a
    Ctrl-C or a kill would stop it) resumes from it when asked again and gives the table of an
    uninterrupted generation value for value; the checkpoint is deleted with the table written.
    Stopped in pass 0 (between its steps), after mate pass 5, after the mate passes, and at the
    start of the rule's first round (its state: passes, rounds, cores)."""
    ref = tb.generate("KRKA", tmp_path / "ref")
    d = tmp_path / "run"
    monkeypatch.setattr(tb, "_PASS0_CHUNK", 2 * 4096)  # KRKA: 24,300 indices, pass 0 in 3 steps
    seen = []

    def stop(state):
        if state["ending"] != "KRKA":
            return
        seen.append((state["phase"], state.get("n")))
        if phase == "rules-round":
            if state["phase"] == "rules" and state["rule_state"] is not None:
                raise KeyboardInterrupt
        elif state["phase"] == phase and (phase != "mate" or state["n"] == 5):
            raise KeyboardInterrupt

    monkeypatch.setattr(tb, "_after_checkpoint", stop)
    with pytest.raises(KeyboardInterrupt):
        tb.generate("KRKA", d, checkpoint_every=0)
    assert tb.checkpoint_path(d, "KRKA").exists() and not tb.table_path(d, "KRKA").exists()
    assert tb.table_path(d, "KRK").exists() and not tb.checkpoint_path(d, "KRK").exists()
    assert tb.Tablebase(d).available() == ["KRK"]  # a checkpoint is no table
    assert seen[-1][0] == phase.split("-")[0]
    monkeypatch.setattr(tb, "_after_checkpoint", None)
    h = tb.generate("KRKA", d, checkpoint_every=None)
    assert h["resumed"] == phase.split("-")[0]
    assert not tb.checkpoint_path(d, "KRKA").exists()
    assert np.array_equal(tb.load_values(d, "KRKA")[0], tb.load_values(tmp_path / "ref", "KRKA")[0])
    assert h["stats"] == ref["stats"] and h["passes"] == ref["passes"]
    assert (h["rule_layers"], h["rule_core"]) == (ref["rule_layers"], ref["rule_core"])


def test_checkpoint_of_another_generation_is_ignored(tmp_path, monkeypatch):
    """A checkpoint that does not match the generation asked for (here: of the pure-mate model when
    cxa-check is asked) is removed and the ending generated from its start."""
    d = tmp_path
    tb.generate("KRK", d)

    def stop(state):
        if state["ending"] == "KRKA" and state["phase"] == "mate":
            raise KeyboardInterrupt

    monkeypatch.setattr(tb, "_after_checkpoint", stop)
    with pytest.raises(KeyboardInterrupt):
        tb.generate("KRKA", d, checkpoint_every=0, rules=tb.PURE_MATE)
    monkeypatch.setattr(tb, "_after_checkpoint", None)
    lines = []
    h = tb.generate("KRKA", d, progress=lines.append)
    assert "resumed" not in h and any("not used" in ln for ln in lines)
    assert not tb.checkpoint_path(d, "KRKA").exists()


def test_generation_memory_of_the_largest_endings():
    """The memory estimate: 4 bytes per index (both sides to move, packed) plus 2 per index of the
    direct sub-tables; every ending of the default set needs at most 22 GB (the largest, e.g.
    KRNKRABB with 4.13 G indices per side, 21.2 GB)."""
    n = tb.Ending.parse("KRNKRABB").size()
    subs = sum(tb.Ending.parse(s).size() for s in tb.Ending.parse("KRNKRABB").sub_endings())
    assert tb.generation_memory("KRNKRABB") == 4 * n + 2 * subs
    top = max(tb.generation_memory(x) for x in tb.default_set())
    assert top == tb.generation_memory("KRNKRABB") and 21e9 < top < 22e9
    assert tb.generation_memory("KRKA", "retro") == 10 * tb.Ending.parse("KRKA").size() + 2 * 4860


def test_default_set():
    names = tb.default_set()
    assert names[:4] == ["KPK", "KCK", "KNK", "KRK"]  # smallest first
    sizes = [tb.Ending.parse(n).size() for n in names]
    assert sizes == sorted(sizes)
    # one attacker against every defence, one against one, two against at most one with defenders,
    # one attacker and one own defender against the full defence; never more than 8 pieces
    for n in ("KRKAABB", "KNKAB", "KPKBB", "KRKN", "KCKP", "KPKP", "KRNKAABB", "KPPKAA", "KRRKR",
              "KNPKRA", "KRAKAABB", "KPBKAABB"):
        assert n in names, n
    for n in ("KRNKRAABB", "KRAAKAABB", "KRKNA", "KRNKNAABB"):
        assert n not in names, n
    assert all(len(n) <= 8 for n in names) and len(names) == len(set(names)) == 464
    assert tb.default_set(max_indices=50_000) == [n for n in names if tb.Ending.parse(n).size() <= 50_000]


def test_cli_generate_default_list(tmp_path, capsys):
    tb.generate("KRK", tmp_path)
    tb.checkpoint_path(tmp_path, "KNK").write_bytes(b"")  # a generation stopped midway
    argv = ["tb", "generate", "--default", "--max-indices", "5000", "--list", "--dir", str(tmp_path)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["KPK\t5,940 indices\t0.0 MB to generate\tmissing",
                     "KCK\t9,720 indices\t0.0 MB to generate\tmissing",
                     "KNK\t9,720 indices\t0.0 MB to generate\tcheckpoint",
                     "KRK\t9,720 indices\t0.0 MB to generate\tpresent"]
    argv = ["tb", "generate", "KRNKRABB", "KRKAABB", "--list", "--dir", str(tmp_path)]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines() == [
        "KRNKRABB\t8,266,860,000 indices\t21.22 GB to generate\tmissing",
        "KRKAABB\t2,041,200 indices\t5.8 MB to generate\tmissing"]


def _turned(board):
    """The board turned round: ranks r -> 9 - r, colours and the side to move swapped."""
    grid = [None] * 90
    for sq, p in enumerate(board.squares):
        if p:
            letter = " kabnrcp"[abs(p)]
            grid[(9 - sq // 9) * 9 + sq % 9] = letter if p > 0 else letter.upper()
    return Board(f"{grid_board_fen(grid)} {'b' if board.turn else 'w'} - - 0 1")


def test_packed_tables_probe_like_the_python_side(tbdir):
    """tbgen.tb_code (the search's probe) agrees with Tablebase.value on random positions of every
    table, both colours (a position with the stronger side Black is looked up turned round)."""
    from xiangqi.engine.movegen import board_arrays

    tbv, tbd, names = tb.pack_tables(tbdir)
    # other tests of this module may add tables to the directory (e.g. KRKN)
    assert set(SMALL) <= set(names) and tbd.shape == (len(names), tbgen.TBD_WIDTH)
    assert names == sorted(names, key=lambda n: (tb.Ending.parse(n).size(), n))  # smallest first
    base = tb.Tablebase(tbdir)
    checked = 0
    for name in SMALL:
        end = tb.Ending.parse(name)
        values, _ = tb.load_values(tbdir, name)
        for side, idx in _legal_samples(end, values, 150, seed=7):
            b = _board(end, _squares(end, idx), side == 0)
            for board in (b, _turned(b)):
                bd, _ks, turn = board_arrays(board)
                code = int(tbgen.tb_code(bd, turn, tbv, tbd))
                assert code == base.value(board)[0] == int(values[side, idx])
                checked += 1
    assert checked >= 6 * 150
    bd, _ks, turn = board_arrays(Board())
    assert tbgen.tb_code(bd, turn, tbv, tbd) == tbgen.NO_TB


def test_search_probes_tables_after_captures(tmp_path):
    """Root-only probing misjudges a position whose own table is absent: 马 vs 士象 (KNKAB, not
    given to the engine) where taking the advisor leaves 马 vs 象, a draw (KNKB), and taking nothing
    keeps a win. The engine that probes KNKA/KNKB inside the search keeps the win and finds the exact
    mate; without the probe it takes the advisor (material) and scores it +2.5 pawns."""
    from xiangqi.engine import Engine, Limit

    full, part = tmp_path / "full", tmp_path / "part"
    tb.generate("KNKAB", full)
    part.mkdir()
    for n in ("KNK", "KNKA", "KNKB"):
        tb.table_path(part, n).write_bytes(tb.table_path(full, n).read_bytes())
    fen = "4k4/9/4ba3/9/4N4/9/9/9/9/4K4 w - - 0 1"
    judge = tb.Tablebase(full)
    assert judge.value(Board(fen))[0] == 37  # Red mates in 37 plies

    def verdict(move):
        b = Board(fen)
        b.push(move)
        return judge.value(b)[0]

    root_only = Engine(hash_mb=4)
    root_only.set_tablebase_path(part)
    root_only.tablebase_in_search = False
    r1 = root_only.search(Board(fen), Limit(depth=6))
    assert r1.tablebase is None  # the root's table is not there
    assert r1.move.iccs() == "e5f7" and verdict(r1.move) == 0  # takes the advisor: a draw
    assert r1.score_cp > 150
    probing = Engine(hash_mb=4)
    probing.set_tablebase_path(part)
    r2 = probing.search(Board(fen), Limit(depth=6))
    assert r2.move.iccs() != "e5f7" and verdict(r2.move) < 0  # Black to move is lost: the win is kept
    # it even sees the whole mate: the line into 马 vs 士 (KNKA) after taking the elephant, mate in
    # 37 plies = 19 moves, the exact value of the table it was not given
    assert (r2.mate, r2.score_cp) == (19, None)
    assert [r2.pv[0].iccs(), r2.pv[2].iccs()] == ["e5g6", "g6e7"]  # the horse takes the elephant
    # Black's reply in the line is one of its longest resistances by the full table (four are equal)
    b = Board(fen)
    b.push(r2.pv[0])
    replies = {}
    for mv in list(b.legal_moves):
        c = b.copy()
        c.push(mv)
        replies[mv.iccs()] = judge.value(c)[0]
    assert replies[r2.pv[1].iccs()] == max(replies.values())


@pytest.mark.slow
def test_generation_resumes_in_the_rule_after_a_core(tmp_path, monkeypatch):
    """KRKN (1,291 positions in a perpetual core, 315 won by the rule): stopped at the start of the
    rule's second round (a core found, its rule passes to run), resumed, the table equals an
    uninterrupted generation, the rule's results included (three KRKN generations: about 7 s)."""
    ref = tb.generate("KRKN", tmp_path / "ref")
    assert ref["rule_layers"] == 1 and ref["rule_core"] == 1291
    d = tmp_path / "run"

    def stop(state):
        rs = state.get("rule_state")
        if state["ending"] == "KRKN" and rs is not None and rs["layers"] == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(tb, "_after_checkpoint", stop)
    with pytest.raises(KeyboardInterrupt):
        tb.generate("KRKN", d, checkpoint_every=0)
    monkeypatch.setattr(tb, "_after_checkpoint", None)
    h = tb.generate("KRKN", d)
    assert h["resumed"] == "rules"
    assert np.array_equal(tb.load_values(d, "KRKN")[0], tb.load_values(tmp_path / "ref", "KRKN")[0])
    assert h["stats"] == ref["stats"]
    assert (h["rule_layers"], h["rule_core"], h["rule_passes"]) == (1, 1291, ref["rule_passes"])
