"""Generation time, size and statistics of endgame tablebases.

Run: ``nice -n 10 .venv/bin/python bench/bench_tablebase.py [--dir DIR] [--markdown] ENDING...``
(default endings: the small set and KRKAABB). Tables already in ``--dir`` are
reused (their stored generation time is reported); a fresh temporary directory
is used when ``--dir`` is not given (``--report``: the stored headers of every
table in ``--dir``). Each ending's time is its own (its
sub-endings are generated first and timed on their own rows); the compile time
of the kernels is excluded by a warm-up on KRK. ``--size-only`` prints the
index sizes and the memory a generation needs without generating. ``--method``
picks the generator (``count``, the default; ``retro``; ``forward``) and
``--threads`` the Numba threads; a generated row also gives its CPU seconds (all
threads; the wall time of a loaded machine says little). No timing is asserted
anywhere. Before/after: ``--method retro`` against the default, in two fresh
directories.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from xiangqi.engine import tablebase as tb

DEFAULT = ["KRK", "KNK", "KCK", "KPK", "KRKA", "KRKB", "KRKAA", "KRKAB", "KRKAABB"]


def rows(directory: Path, names: list[str], method: str = "count") -> list[dict]:
    """Generate ``names`` (and their sub-endings) in ``directory``; one row per table, sub-endings first."""
    seen: dict[str, dict] = {}

    def visit(name: str) -> None:
        end = tb.Ending.parse(name)
        for s in end.sub_endings():
            visit(s)
        if end.name in seen:
            return
        cpu = time.process_time()
        h = tb.generate(end.name, directory, method=method)
        h["cpu"] = time.process_time() - cpu
        h["file_bytes"] = tb.table_path(directory, end.name).stat().st_size
        seen[end.name] = h

    for n in names:
        visit(n)
    return list(seen.values())


def table(results: list[dict]) -> str:
    """Markdown table: ending, legal positions, W/D/L for each side to move, longest DTM, seconds, bytes."""
    cpu = all("cpu" in h for h in results)
    out = ["| ending | indices | legal positions | red to move W/D/L | black to move W/D/L | longest DTM "
           "(plies) | time (s) | " + ("CPU (s) | " if cpu else "") + "file (bytes) |",
           "|---|---:|---:|---|---|---:|---:|---:|" + ("---:|" if cpu else "")]
    for h in results:
        r, b = h["stats"]["red"], h["stats"]["black"]
        out.append(f"| {h['ending']} | {2 * h['size']:,} | {r['positions'] + b['positions']:,} | "
                   f"{r['wins']:,}/{r['draws']:,}/{r['losses']:,} | "
                   f"{b['wins']:,}/{b['draws']:,}/{b['losses']:,} | "
                   f"{max(r['longest_dtm'], b['longest_dtm'])} | {h['seconds']:.1f} | "
                   + (f"{h['cpu']:.2f} | " if cpu else "") + f"{h['file_bytes']:,} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("endings", nargs="*", default=DEFAULT)
    ap.add_argument("--dir", default=None, help="table directory (default: a fresh temporary one)")
    ap.add_argument("--size-only", action="store_true", help="print index sizes and memory, generate nothing")
    ap.add_argument("--report", action="store_true",
                    help="print the table of every table file in --dir (stored times), generate nothing")
    ap.add_argument("--method", choices=tb.METHODS, default="count", help="the generator (default: count)")
    ap.add_argument("--threads", type=int, default=None, help="Numba threads (default: all cores)")
    args = ap.parse_args()
    if args.threads:
        import numba

        numba.set_num_threads(args.threads)
    if args.report:
        d = Path(args.dir)
        names = sorted(tb.Tablebase(d).available(), key=lambda n: (tb.Ending.parse(n).size(), n))
        heads = []
        for n in names:
            h = tb.load_values(d, n)[1]
            h["file_bytes"] = tb.table_path(d, n).stat().st_size
            heads.append(h)
        print(table(heads))
        total = sum(h["file_bytes"] for h in heads)
        secs = sum(h["seconds"] for h in heads)
        print(f"\n{len(heads)} tables, {total:,} bytes, {secs:,.0f} s of generation")
        return
    if args.size_only:
        for n in args.endings:
            e = tb.Ending.parse(n)
            print(f"{e.name}: {2 * e.size():,} indices, {4 * e.size() / 2**20:,.1f} MiB of int16 values, "
                  f"{tb.generation_memory(e.name, args.method) / 2**20:,.1f} MiB to generate "
                  f"(sub-endings {', '.join(e.sub_endings()) or 'none'})")
        return
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(args.dir) if args.dir else Path(tmp)
        tb.generate("KRK", Path(tmp) / "warmup")  # compile or load the kernels
        print(table(rows(d, args.endings, args.method)))


if __name__ == "__main__":
    main()
