"""Build the master games file shipped in the package (``src/xiangqi/db/data/masters.pgn.xz``).

    xiangqi db import ../shared/corpus/ccpd/CCPD-Dataset-original-big5.tar.gz --glob '*大師對局*' \
        --db /tmp/m.db
    xiangqi db import ../shared/corpus/wxf-masters/Hu_Ronghua_1391_UCI_games.pgn \
        ../shared/corpus/wxf-masters/Liu_Dahua_1125_UCI_games.pgn --db /tmp/m.db
    python tools/masters_pack.py /tmp/m.db src/xiangqi/db/data/masters.pgn.xz

Every game of the database (the importer has merged identical games and dropped the unplayable ones)
is written, in the database's order, as PGN with the tags Event, Round, Date, Site, Red, Black, Result
and ECCO as the source gave them and the main line in ICCS (``h2e2``), without comments; the whole
file xz-compressed. Games from a position other than the standard start keep their FEN tag. The
credit and licences of the sources are in ``src/xiangqi/db/data/NOTICE.md``; ``xiangqi db import
--masters`` and the page's import button read the file (:mod:`xiangqi.db.masters`).
"""

from __future__ import annotations

import argparse
import json
import lzma
import sqlite3
import sys

TAGS = ("Event", "Round", "Date", "Site", "Red", "Black", "Result", "ECCO")


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def pgn_of(headers: dict, fen: str | None, moves: str, result: str) -> str:
    """One game as PGN text (tags, ICCS main line, result)."""
    tags = {k: str(headers.get(k, "") or "") for k in TAGS}
    tags["Result"] = result
    lines = [f'[{k} "{_quote(v)}"]' for k, v in tags.items() if v]
    if fen:
        lines.append(f'[FEN "{fen}"]')
    return "\n".join(lines) + "\n\n" + (moves + " " if moves else "") + result + "\n\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", help="SQLite games database holding the master games")
    ap.add_argument("out", help="output .pgn.xz file")
    args = ap.parse_args(argv)
    conn = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    parts = []
    for headers, fen, moves, result in conn.execute(
            "SELECT headers, fen, moves, result FROM games WHERE collection <> 'mine' ORDER BY id"):
        parts.append(pgn_of(json.loads(headers or "{}"), fen, moves, result))
    data = "".join(parts).encode("utf-8")
    packed = lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)
    with open(args.out, "wb") as fh:
        fh.write(packed)
    print(f"{len(parts)} games, {len(data):,} bytes of PGN, {len(packed):,} bytes xz", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
