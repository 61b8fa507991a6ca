"""Reading speed of game records (issue 4): games per second on the CCPD Big5 set.

Run: ``.venv/bin/python bench/bench_read.py [--games N | --all] [--tar PATH]``.

The files are first taken out of the tarball into memory (not timed). Then it times
``read_records`` on each file's bytes (encoding sniffing + Chinese PGN parsing + checking every
move against the rules) and, as the peer in the same run, the replay of the same moves from ICCS
through the core ``Board.push`` (the legality check alone, the floor of any reader that validates
moves). It prints games/s and plies/s of both and ``ratio`` = reader time / replay time, so the
numbers compare across machines, and games per CPU second of this process (``time.process_time``),
which hold on a machine busy with other work where the wall-clock rate does not. No timing is
asserted anywhere.
"""

from __future__ import annotations

import argparse
import tarfile
import time
from pathlib import Path

from xiangqi.core.board import Board, Move
from xiangqi.core.records import read_records

DEFAULT_TAR = (Path(__file__).resolve().parents[2] / "shared" / "corpus" / "ccpd"
               / "CCPD-Dataset-original-big5.tar.gz")


def load(tar_path: Path, limit: int | None) -> list[bytes]:
    """Bytes of the first ``limit`` master-game files (all files with ``limit=None``)."""
    out = []
    with tarfile.open(tar_path) as tar:
        for member in tar:
            if not member.isfile() or not member.name.endswith(".pgn"):
                continue
            if limit is not None and "大師對局" not in member.name:
                continue
            fh = tar.extractfile(member)
            if fh is not None:
                out.append(fh.read())
            if limit is not None and len(out) >= limit:
                break
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="number of master-game files (default 2000)")
    parser.add_argument("--all", action="store_true", help="every file of the set (about 58,500; minutes)")
    parser.add_argument("--tar", type=Path, default=DEFAULT_TAR, help="the CCPD tarball")
    args = parser.parse_args()
    files = load(args.tar, None if args.all else args.games)

    t = time.perf_counter()
    cpu = time.process_time()
    games = []
    unreadable = 0
    for data in files:
        try:
            games.extend(read_records(data))
        except ValueError:
            unreadable += 1
    read_s = time.perf_counter() - t
    read_cpu = time.process_time() - cpu
    plies = sum(len(g.mainline_moves()) for g in games)
    playable = [g for g in games if not any(e.startswith("FEN tag") for e in g.errors)]
    lines = [[m.iccs() for m in g.mainline_moves()] for g in playable]
    starts = [g.headers.get("FEN", "") for g in playable]

    t = time.perf_counter()
    cpu = time.process_time()
    for fen, moves in zip(starts, lines, strict=True):
        board = Board(fen) if fen else Board()
        for text in moves:
            board.push(Move.from_iccs(text))
    replay_s = time.perf_counter() - t
    replay_cpu = time.process_time() - cpu

    print(f"files {len(files)}  games {len(games)}  unreadable {unreadable}  "
          f"with errors {sum(1 for g in games if g.errors)}  plies {plies}")
    print(f"read_records  {len(games) / read_s:8.1f} games/s  {plies / read_s:9.0f} plies/s  "
          f"({read_s:.2f} s)")
    print(f"peer: replay  {len(lines) / replay_s:8.1f} games/s  {plies / replay_s:9.0f} plies/s  "
          f"({replay_s:.2f} s)")
    print(f"ratio (read / replay time) {read_s / replay_s:.2f}")
    print(f"per CPU second: read_records {len(games) / read_cpu:.1f} games/s ({read_cpu:.2f} CPU s), "
          f"replay {len(lines) / replay_cpu:.1f} games/s; ratio {read_cpu / replay_cpu:.2f}")


if __name__ == "__main__":
    main()
