"""Command line: ``xiangqi play | serve | perft | ...``.

Each subcommand is a small function ``cmd_<name>(args) -> int``; the parser is
built in :func:`build_parser`. Errors in user input print one clear line on
stderr and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from xiangqi.core.board import STARTING_FEN, Board
from xiangqi.core.errors import XiangqiError

# Deepest `xiangqi perft` accepted: the core recurses once per ply, and no deeper count could finish.
MAX_PERFT_DEPTH = 100


def cmd_perft(args: argparse.Namespace) -> int:
    """Print perft per root move (with --divide) and the total node count on the last line."""
    board = Board(args.fen)
    if not 0 <= args.depth <= MAX_PERFT_DEPTH:
        # The core's perft recurses once per ply: a deeper count could never finish anyway.
        raise XiangqiError(f"depth must be 0-{MAX_PERFT_DEPTH}, got {args.depth}")
    if args.engine == "numba":
        from xiangqi.engine.movegen import perft as count
    else:
        count = Board.perft
    if args.divide and args.depth >= 1:
        # Both engines divide the same way (--divide used to be ignored with the Numba engine).
        total = 0
        for m in list(board.legal_moves):
            board.push(m, validate=False)
            n = _interruptible(count, board, args.depth - 1)
            board.pop()
            print(f"{m.iccs()}: {n}", flush=True)
            total += n
    else:
        total = _interruptible(count, board, args.depth)
    print(total)
    return 0


def _interruptible(fn, *args):  # noqa: ANN001, ANN202
    """Run ``fn(*args)`` in a daemon thread so that Ctrl-C stops the command at once
    (a Numba kernel does not return to Python, where signals are handled, until it ends)."""
    import threading

    box: list = []

    def run() -> None:
        try:
            box.append((True, fn(*args)))
        except BaseException as exc:  # handed to the main thread below
            box.append((False, exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    ok, value = box[0]
    if not ok:
        raise value
    return value


def cmd_play(args: argparse.Namespace) -> int:
    """Start the game server on 127.0.0.1 (another --host needs --lan); ``play`` also opens the browser."""
    from xiangqi.web.run import HOST, LAN_HOST, serve
    from xiangqi.web.security import trusted_proxies

    if args.port is not None and not 0 <= args.port <= 65535:
        raise XiangqiError(f"--port must be 0-65535, got {args.port}")
    host = args.host or (LAN_HOST if args.lan else HOST)
    public = getattr(args, "public", False)
    if getattr(args, "db", None) and not public:
        raise XiangqiError("--db is the online database of a public server: use it with --public")
    redis = getattr(args, "redis", None)
    if redis and not public:
        raise XiangqiError("--redis is the event bus of a public server: use it with --public")
    trust = getattr(args, "trust_proxy", None)
    if trust is not None and not public:
        raise XiangqiError("--trust-proxy names the reverse proxy in front of a public server: use it with "
                           "--public (the local server answers its peers themselves)")
    try:
        trusted = trusted_proxies(trust) if trust is not None else ()
    except ValueError as exc:
        raise XiangqiError(str(exc)) from None
    if redis and not getattr(args, "db", None):
        raise XiangqiError("--redis shares games between server processes, which needs a database they "
                           "all reach: add --db postgresql+psycopg://… (the default online.db is one "
                           "process's file)")
    try:
        return serve(8000 if public and args.port is None else args.port,
                     open_browser=args.open_browser, data_dir=args.data_dir, host=host, lan=args.lan,
                     public=public, db_url=getattr(args, "db", None), redis_url=redis, trust_proxy=trusted)
    except OSError as exc:
        raise XiangqiError(str(exc)) from exc


def cmd_online_flags(args: argparse.Namespace) -> int:
    """Print the pairs of accounts that played many rated games against each other from one address
    (rating farming; DESIGN.md "Security"): one line per pair, or JSON lines with ``--json``."""
    import json

    import sqlalchemy as sa

    from xiangqi.online.store import SAME_ADDRESS_DAYS, SAME_ADDRESS_GAMES, OnlineStore

    min_games = SAME_ADDRESS_GAMES if args.min_games is None else args.min_games
    days = SAME_ADDRESS_DAYS if args.days is None else args.days
    if min_games < 1 or days <= 0:
        raise XiangqiError("--min-games must be at least 1 and --days more than 0")
    url = args.db
    if url is None:
        from pathlib import Path

        from xiangqi.datadir import default_data_dir

        path = (Path(args.data_dir) if args.data_dir else default_data_dir()) / "online.db"
        if not path.exists():
            raise XiangqiError(f"no online database at {path}: give --db URL (the server's --db)")
        url = f"sqlite:///{path}"
    engine = sa.create_engine(url)
    try:
        pairs = OnlineStore(engine).flagged_pairs(min_games, days)
    except sa.exc.SQLAlchemyError as exc:
        raise XiangqiError(f"cannot read the online database: {exc}") from exc
    finally:
        engine.dispose()
    for p in pairs:
        if args.json:
            print(json.dumps({**p, "names": list(p["names"]), "first": p["first"].isoformat(),
                              "last": p["last"].isoformat()}, ensure_ascii=False))
        else:
            print(f"{p['names'][0]} (#{p['user_lo']}) – {p['names'][1]} (#{p['user_hi']}): {p['games']} "
                  f"rated games from {', '.join(p['addresses'])}, {p['first']:%Y-%m-%d} to "
                  f"{p['last']:%Y-%m-%d}; games {' '.join(p['game_ids'])}")
    if not pairs and not args.json:
        print(f"no pair of accounts has {min_games} or more rated games from one address in the "
              f"last {days:g} days")
    return 0


def cmd_engine(args: argparse.Namespace) -> int:
    """Run the built-in engine as a UCI/UCCI engine on stdin/stdout (the first command picks the protocol);
    with ``--warmup`` compile (or load) the Numba kernels, say where they are cached and how long it took,
    and exit."""
    if args.warmup:
        import time

        t0 = time.monotonic()
        from xiangqi.engine import _numba, is_ready, warmup

        warmup(background=False)
        print(f"engine kernels ready in {time.monotonic() - t0:.1f} s (cache {_numba.cache_dir()})")
        return 0 if is_ready() else 1
    from xiangqi.engine.uci.server import serve

    return serve()


def cmd_outcome(args: argparse.Namespace) -> int:
    """Play the ICCS moves from --fen and print the result (red/black/draw/none), then its reason."""
    from xiangqi.core.errors import IllegalMoveError
    from xiangqi.core.referee import get_rules

    rules = get_rules(args.rules)
    board = Board(args.fen)
    for i, text in enumerate(args.moves, 1):
        try:
            board.push_iccs(text)
        except XiangqiError as exc:
            raise IllegalMoveError(f"move {i} ({text!r}): {exc}") from exc
        if i < len(args.moves) and board.outcome(rules) is not None:
            raise XiangqiError(f"move {i} ({text!r}) already ends the game: {board.outcome(rules)}; "
                               f"{len(args.moves) - i} more move(s) given")
    out = board.outcome(rules)
    if out is None:
        print("none")
        print("对局继续 / the game goes on")
        return 0
    print(out.winner_name())
    print(f"{out.reason_zh} / {out.reason_en}")
    if args.explain:
        from xiangqi.core.referee import explain_cycle

        for line in explain_cycle(board, rules) or ["(no repetition ruling: nothing to explain)"]:
            print(line)
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    """Convert game records between PGN, XQF, DhtmlXQ/UBB and EPD (format from the extension or --to).

    Exit status 0 when every game converted cleanly, 1 when some games had problems (listed on
    stderr, the readable part is written), 2 when the input cannot be read or written at all.
    What the output format cannot hold (XQF: headers without a field, strings cut at their field size,
    NAGs) is printed as notes naming each item; the status stays 0 for it.
    """
    from pathlib import Path

    from xiangqi.core.records import format_from_path, game_label, read_records, start_problem, write_records

    if args.input != "-" and Path(args.input).is_dir():
        raise XiangqiError(f"{args.input!r} is a directory: give one record file")
    if args.input != "-" and not Path(args.input).is_file():
        raise XiangqiError(f"no such file: {args.input!r}")
    fmt = args.to or format_from_path(args.output)
    if fmt is None:
        raise XiangqiError(f"cannot tell the output format from {args.output!r}: "
                           "use --to pgn|xqf|dhtmlxq|epd")
    source = sys.stdin.buffer.read() if args.input == "-" else args.input
    try:
        games = read_records(source, fmt=args.input_format, encoding=args.input_encoding)
    except XiangqiError as exc:  # name the file: "bad.xqf: the data is neither UTF-8, …"
        where = "standard input" if args.input == "-" else args.input
        raise XiangqiError(f"{where}: {exc}" if not str(exc).startswith(f"{where}:") else str(exc)) from None
    losses: list[str] = []
    unreadable = {i for i, g in enumerate(games, 1) if start_problem(g) is not None}
    if games and len(unreadable) == len(games):  # nothing to write: bad input, exit 2
        where = "standard input" if args.input == "-" else args.input
        raise XiangqiError(f"{where}: {game_label(games[0], 1)}: {start_problem(games[0])}")
    for i in sorted(unreadable):  # told with the other problems below; the other games are converted
        print(f"xiangqi convert: warning: {game_label(games[i - 1], i)}: not converted: its start position "
              "is unreadable", file=sys.stderr)
    kept = [g for i, g in enumerate(games, 1) if i not in unreadable]
    data = write_records(kept, fmt, notation=args.notation, encoding=args.encoding,
                         fullwidth_black=args.fullwidth_black, traditional=args.traditional, warnings=losses)
    if args.output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        try:
            Path(args.output).write_bytes(data)
        except OSError as exc:
            raise XiangqiError(f"cannot write {args.output!r}: {exc.strerror or exc}") from None
    problems = 0
    for i, game in enumerate(games, 1):
        for err in game.errors:
            problems += 1
            print(f"xiangqi convert: warning: {game_label(game, i)}: {err}", file=sys.stderr)
    for loss in losses:
        print(f"xiangqi convert: note: not kept in {fmt}: {loss}", file=sys.stderr)
    plies = sum(len(g.mainline_moves()) for i, g in enumerate(games, 1) if i not in unreadable)
    print(f"converted {len(games) - len(unreadable)} game(s), {plies} main-line plies, to {fmt}"
          + (f" with {problems} problem(s)" if problems else "")
          + (f"; {len(losses)} thing(s) the format cannot hold were dropped or cut (notes above)"
             if losses else ""), file=sys.stderr)
    return 1 if problems else 0


def cmd_match(args: argparse.Namespace) -> int:
    """Play an engine match and print the score, the Elo difference and its 95% error bar."""
    from xiangqi.match.runner import BUILTIN, OPENINGS, PlayerSpec, TimeControl, run_match

    if args.variant == "jieqi":  # 揭棋: its own players and games (app/play/jieqi_match.py)
        from xiangqi.app.play.jieqi_match import cmd_match_jieqi

        return cmd_match_jieqi(args)
    args.tc = "200ms" if args.tc is None else args.tc
    a = PlayerSpec.parse(args.a, args.option_a, hash_mb=args.hash)
    b = PlayerSpec.parse(args.b, args.option_b, hash_mb=args.hash)
    for name in ("start_timeout", "ping_timeout"):
        if not getattr(args, name) > 0:
            raise XiangqiError(f"--{name.replace('_', '-')} must be > 0 seconds, got {getattr(args, name)}")
    a.cwd, b.cwd = args.cwd_a, args.cwd_b
    for folder, which in ((a.cwd, "a"), (b.cwd, "b")):
        if folder is not None and not os.path.isdir(folder):
            raise XiangqiError(f"--cwd-{which}: {folder!r} is not a folder")
    a.start_timeout = b.start_timeout = args.start_timeout
    a.ping_timeout = b.ping_timeout = args.ping_timeout
    for spec, text, which in ((a, args.a, "A"), (b, args.b, "B")):
        if text.strip() == BUILTIN or text.strip().startswith(BUILTIN + ":"):
            continue
        from xiangqi.engine.uci.commands import EngineSetupError, resolve_command

        try:  # a relative program or argument, against this folder (as the page does for added engines)
            spec.command = resolve_command(spec.command[0], spec.command[1:])
        except EngineSetupError as exc:
            raise XiangqiError(f"engine {which} ({text}): {exc}") from None
    tc = TimeControl.parse(args.tc)
    tc_b = TimeControl.parse(args.tc_b) if args.tc_b is not None else None
    if args.games < 1:
        raise XiangqiError(f"--games must be >= 1, got {args.games}")
    if args.concurrency < 1:
        raise XiangqiError(f"--concurrency must be >= 1, got {args.concurrency}")
    if args.openings is not None and args.openings < 1:
        raise XiangqiError("--openings must be >= 1")
    if args.first_game < 1:
        raise XiangqiError(f"--first-game must be >= 1, got {args.first_game}")
    if args.openings_file:
        from xiangqi.match.runner import read_openings

        pool = read_openings(args.openings_file)
    else:
        pool = OPENINGS
    openings = pool[:args.openings] if args.openings else pool
    if args.variant == "random":  # 随机开局: a shuffle per pair of games, colours swapped (core/variants.py)
        import random as _random

        from xiangqi.match.runner import random_openings

        pairs = (args.games + 1) // 2
        openings = random_openings(min(pairs, args.openings or pairs), _random.Random(args.seed))
    cpus = os.cpu_count() or 1
    if min(args.concurrency, args.games) > cpus:
        print(f"xiangqi match: warning: {min(args.concurrency, args.games)} games at once on {cpus} CPUs: "
              "the engines share cores and search less per move than their time control allows",
              file=sys.stderr)

    from xiangqi.match.outside_referee import get_referee

    referee = get_referee(args.referee)
    if args.pgn:
        try:  # fail early on a path that cannot be written, but keep an old file until a game ends
            open(args.pgn, "a", encoding="utf-8").close()
        except OSError as exc:
            raise XiangqiError(f"cannot write {args.pgn!r}: {exc.strerror or exc}") from None
    pgn_mode = ["w"]

    def report(g, res) -> None:
        ours = ""
        if g.rulings_differ:
            ours = "  (our referee: " + ("no ruling" if g.own is None else f"{g.own[0]} at ply {g.own[2]}, "
                                                                           f"{g.own[1]}") + ")"
        print(f"Game {g.round}: {g.red} vs {g.black} ({g.opening}): {g.result} {g.reason}  "
              f"[{res.wins} - {res.losses} - {res.draws}]{ours}", flush=True)
        if args.pgn:  # written game by game, so an interrupted match keeps its games
            with open(args.pgn, pgn_mode[0], encoding="utf-8") as fh:
                fh.write(res.game_pgn(g) + "\n")
            pgn_mode[0] = "a"

    sprt = None
    if args.sprt is not None:
        from xiangqi.match.sprt import Sprt

        try:
            sprt = Sprt(args.sprt[0], args.sprt[1], args.alpha, args.beta, args.sprt_model)
        except ValueError as exc:
            raise XiangqiError(f"--sprt: {exc}") from None
        for path in args.sprt_prior:  # the games of the match's earlier parts count first
            from xiangqi.match.sprt import pgn_scores

            try:
                with open(path, encoding="utf-8") as fh:
                    prior = pgn_scores(fh.read(), a.name)
            except (OSError, UnicodeDecodeError) as exc:
                raise XiangqiError(f"--sprt-prior {path!r}: {exc}") from None
            if not prior:
                raise XiangqiError(f"--sprt-prior {path!r}: no finished game of {a.name!r}")
            if len(prior) % 2 and args.sprt_model == "pentanomial":
                raise XiangqiError(f"--sprt-prior {path!r}: {len(prior)} games, an incomplete pair")
            for score in prior:
                sprt.add(score)
            print(f"SPRT: {len(prior)} earlier games of {a.name} from {path}", flush=True)

    def until(res) -> bool:
        sprt.add(res.games[-1].score_for(res.a))
        if sprt.status() == "continue":
            return False
        return args.sprt_model == "trinomial" or len(res.games) % 2 == 0

    res = run_match(a, b, args.games, tc, openings=openings, ply_cap=args.ply_cap,
                    time_margin=args.time_margin, on_game=report, tc_b=tc_b, concurrency=args.concurrency,
                    until=until if sprt is not None else None, first=args.first_game - 1, referee=referee)
    print(res.summary())
    if sprt is not None:
        print(sprt.summary())
    if args.pgn:
        print(f"PGN: {args.pgn}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Print perft and search nodes/s (with a peer's perft speed and the ratio when given)."""
    from xiangqi.match.runner import peer_perft_speed, perft_speed, search_speed

    nodes, dt = perft_speed(args.perft_depth)
    print(f"perft {args.perft_depth} (start position): {nodes} nodes in {dt:.2f}s "
          f"= {nodes / dt:,.0f} nodes/s")
    if args.peer:
        pn, pdt = peer_perft_speed(args.peer, args.perft_depth)
        if pn != nodes:
            raise XiangqiError(f"{args.peer} counts {pn} nodes at perft {args.perft_depth}, we count {nodes}")
        print(f"perft {args.perft_depth} by {args.peer}: {pn} nodes in {pdt:.2f}s = {pn / pdt:,.0f} nodes/s")
        print(f"perft speed ratio (ours / {args.peer}): {(nodes / dt) / (pn / pdt):.2f}")
    if args.search_depth > 0:
        sn, sdt, lines = search_speed(args.search_depth, args.hash)
        for line in lines:
            print(f"  {line}")
        print(f"search depth {args.search_depth}: {sn} nodes in {sdt:.2f}s = {sn / sdt:,.0f} nodes/s")
    return 0


def _ext_order(ext: str) -> int:
    """Record file extensions in the order of :data:`xiangqi.core.records.FORMATS` (for messages)."""
    from xiangqi.core.records import FORMATS

    order = [e for group in FORMATS.values() for e in group]
    return order.index(ext) if ext in order else len(order)


def cmd_ecco(args: argparse.Namespace) -> int:
    """Print each game's ECCO code and name computed from its moves (a file's [ECCO] tag is not used)."""
    from pathlib import Path

    from xiangqi.core.records import FORMATS, read_records, start_problem
    from xiangqi.study.ecco import classify

    if not 0 <= args.plies <= 400:
        raise XiangqiError(f"--plies must be 0-400, got {args.plies}")
    exts = {e for group in FORMATS.values() for e in group}
    paths: list[Path] = []
    problems = agree = compared = unreadable = 0
    for name in args.files:
        p = Path(name)
        found = (sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in exts)
                 if p.is_dir() else [p])
        if not found:
            print(f"xiangqi ecco: {p}: no record file ({' '.join(sorted(exts, key=_ext_order))}) in this "
                  "folder", file=sys.stderr)
            unreadable += 1
        paths.extend(found)
    for path in paths:
        try:
            games = read_records(path)
        except (XiangqiError, OSError) as exc:
            text = str(exc)
            if text.startswith(f"{path}: "):  # the reader names the file already
                text = text[len(f"{path}: "):]
            print(f"xiangqi ecco: {path}: {text}", file=sys.stderr)
            unreadable += 1
            continue
        for i, game in enumerate(games, 1):
            where = f"{path}#{i}" if len(games) > 1 else str(path)
            bad_start = start_problem(game)
            if bad_start is not None:  # not "A00" nor "not from the standard start": no position at all
                print(f"xiangqi ecco: {where}: {bad_start}", file=sys.stderr)  # said once, as the error
                problems += 1
                continue
            for error in game.errors:  # read in part (cut short, a bad move): classified as far as read
                print(f"xiangqi ecco: warning: {where}: {error}", file=sys.stderr)
            problems += bool(game.errors)
            try:
                result = classify(game, plies=args.plies)
            except XiangqiError as exc:
                print(f"xiangqi ecco: {where}: {exc}", file=sys.stderr)
                problems += 1
                continue
            code, label = result if result else ("-", "(not from the standard start)")
            line = f"{where}\t{code}\t{label}"
            if args.compare:
                tag = game.headers.get("ECCO", "").strip().upper()
                if tag and result:
                    compared += 1
                    agree += tag == code
                line += f"\t[ECCO {tag or '-'}]" + ("" if not tag or tag == code else " differs")
            print(line)
    if args.compare:
        print(f"agree with the [ECCO] tags: {agree}/{compared}", file=sys.stderr)
    return 2 if unreadable else 1 if problems else 0  # README: bad input 2; some games with problems 1


def cmd_analyse(args: argparse.Namespace) -> int:
    """Review every game of a record file: annotated PGN (-o), a summary table, JSON lines (--json)."""
    from xiangqi.study.analyse import engine_command, run

    engine = None
    if args.engine is not None:
        engine = engine_command(args.engine, args.engine_arg, args.engine_option, args.engine_protocol,
                                args.engine_cp_scale)
    elif args.engine_arg or args.engine_option or args.engine_cp_scale is not None:
        raise XiangqiError("--engine-arg and --engine-option go with --engine CMD")
    return run(args.input, args.output, depth=args.depth, movetime_ms=args.movetime, jobs=args.jobs,
               as_json=args.json, hash_mb=args.hash, input_format=args.input_format, cluster=args.cluster,
               deep=-1 if args.deep is None else args.deep, engine=engine, quiet=args.quiet,
               confirm=args.confirm)


def cmd_tb_generate(args: argparse.Namespace) -> int:
    """Generate tablebases (and their sub-endings) with progress on stderr; one summary line per ending."""
    from xiangqi.engine.tablebase import (
        Ending,
        checkpoint_path,
        default_dir,
        default_set,
        generate,
        generation_memory,
        progress_to_stderr,
        table_path,
    )

    names = [Ending.parse(n).name for n in args.endings]  # every name checked before any work
    if args.default:
        names += [n for n in default_set(args.max_indices) if n not in names]
    if not names:
        print("xiangqi tb generate: name endings or give --default", file=sys.stderr)
        return 2
    if args.list:
        directory = Path(args.dir) if args.dir else default_dir()
        for name in names:
            present = "present" if table_path(directory, name).exists() else (
                "checkpoint" if checkpoint_path(directory, name).exists() else "missing")
            mem = generation_memory(name)
            mem_text = f"{mem / 1e9:.2f} GB" if mem >= 1e9 else f"{mem / 1e6:.1f} MB"
            print(f"{name}\t{Ending.parse(name).size() * 2:,} indices\t{mem_text} to generate\t{present}")
        return 0
    every = args.checkpoint_minutes * 60 if args.checkpoint_minutes > 0 else None
    for name in names:
        h = _interruptible(lambda n=name: generate(n, args.dir, progress=progress_to_stderr,
                                                   force=args.force, rules=args.rules,
                                                   checkpoint_every=every))
        st = h["stats"]
        print(f"{h['ending']} ({h['rules']}): {h['size'] * 2:,} indices, red to move {st['red']['wins']}/"
              f"{st['red']['draws']}/{st['red']['losses']} (win/draw/loss), black to move "
              f"{st['black']['wins']}/{st['black']['draws']}/{st['black']['losses']}, longest mate "
              f"{max(st['red']['longest_dtm'], st['black']['longest_dtm'])} plies"
              + "".join(f", {side} to move {st[side]['rule_wins']}/{st[side]['rule_losses']} won/lost by "
                        "the perpetual-check rule" for side in ("red", "black")
                        if st[side].get("rule_wins") or st[side].get("rule_losses")))
    return 0


def cmd_tb_probe(args: argparse.Namespace) -> int:
    """Print the tablebase value of FEN (exit 1 when no table holds it)."""
    import json

    from xiangqi.engine.tablebase import Tablebase

    board = Board(args.fen)
    if args.dir is not None and not os.path.isdir(args.dir):  # not "the position is not in the tables"
        raise XiangqiError(f"--dir: no such folder: {args.dir!r}")
    res = Tablebase(args.dir).probe(board)
    if res is None:
        print(f"xiangqi tb probe: the position is not in the tables of {Tablebase(args.dir).directory}",
              file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"wdl": res.wdl, "dtm": res.dtm, "best": res.best, "rule": res.rule,
                          "rules": Tablebase(args.dir).rules(res.ending)}))
    else:
        print(f"ending: {res.ending} (rules: {Tablebase(args.dir).rules(res.ending)})")
        print(f"wdl: {res.wdl} (for {'red' if board.turn else 'black'}, the side to move)")
        print(f"dtm: {res.dtm if res.dtm is not None else '-'}" + (" plies" if res.dtm is not None else ""))
        if res.rule:
            print(f"rule: {res.wdl} by one-sided perpetual check (长将), "
                  f"{res.rule_plies} plies to the perpetual")
        print(f"best: {' '.join(res.best) or '-'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="xiangqi", description="Xiangqi (Chinese chess) tools and game")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("perft", help="count the leaf nodes of the legal move tree")
    p.add_argument("depth", type=int, help="depth in plies (0-100)")
    p.add_argument("--fen", default=STARTING_FEN, help="start position (default: the standard start)")
    p.add_argument("--divide", action="store_true", help="also print the count under each root move")
    p.add_argument("--engine", choices=["core", "numba"], default="numba",
                   help="move generator: the Numba engine (default) or the pure-Python core")
    p.set_defaults(func=cmd_perft)

    # -- further subcommands are registered below this line --

    from xiangqi.db.cli import register as register_db

    register_db(sub)
    from xiangqi.db.book_cli import register as register_book

    register_book(sub)

    from xiangqi.cli.puzzles import register as register_puzzles

    register_puzzles(sub)

    p = sub.add_parser("convert", help="convert game records: PGN, XQF, DhtmlXQ/UBB, EPD",
                       description="Read IN (format sniffed from its content) and write OUT in the format "
                                   "of its extension (.pgn .xqf .ubb .epd) or --to. '-' is stdin/stdout.")
    p.add_argument("input", metavar="IN", help="record file to read ('-' for stdin)")
    p.add_argument("output", metavar="OUT", help="file to write ('-' for stdout)")
    p.add_argument("--to", choices=["pgn", "xqf", "dhtmlxq", "epd"], default=None,
                   help="output format (default: from OUT's extension)")
    p.add_argument("--notation", choices=["chinese", "wxf", "iccs", "san"], default="chinese",
                   help="move text in PGN output (default: chinese; iccs writes H2-E2; san writes the "
                        "[Variant \"xiangqi\"] PGN of WinBoard/XBoard and Fairy-Stockfish, ranks 1-10)")
    p.add_argument("--encoding", default="utf-8",
                   help="text encoding of the output (default utf-8; gbk for old programs such as 象棋巫师)")
    p.add_argument("--fullwidth-black", action=argparse.BooleanOptionalAction, default=None,
                   help="Chinese PGN: black numbers as full-width digits (马２进３), as 象棋巫师 writes "
                        "and reads them (default: on with --encoding gbk, off otherwise)")
    p.add_argument("--traditional", action="store_true",
                   help="Chinese PGN: traditional characters (傌 俥 進)")
    p.add_argument("--input-encoding", default=None, help="force the input text encoding (default: sniffed)")
    p.add_argument("--from", dest="input_format", choices=["pgn", "xqf", "dhtmlxq", "epd"], default=None,
                   help="input format (default: sniffed from the content)")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("outcome", help="play ICCS moves and print the result with its reason (rulings 棋例)",
                       description="Prints one line: red, black, draw or none; then the reason.")
    p.add_argument("moves", nargs="*", metavar="MOVE", help="ICCS moves, e.g. h2e2 h9g7")
    p.add_argument("--fen", default=STARTING_FEN, help="start position (default: the standard start)")
    p.add_argument("--rules", choices=["cxa", "axf"], default="cxa",
                   help="rule set for repetition rulings: cxa (Chinese, default) or axf (Asian)")
    p.add_argument("--explain", action="store_true",
                   help="after the result, print each move of the repetition cycle with its class "
                        "(将/杀/捉/闲) and the article that decided it, then each side's verdict")
    p.set_defaults(func=cmd_outcome)

    for name, help_text, browser in (
            ("play", "play in the browser (starts the server, opens the browser)", True),
            ("serve", "start the game server without opening a browser", False)):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--port", type=int, default=None, help="TCP port (default: a free one)")
        p.add_argument("--host", default=None,
                       help="address to listen on (default 127.0.0.1: this machine only); "
                            "any other address needs --lan")
        p.add_argument("--lan", action="store_true",
                       help="allow serving the local network (--host; 0.0.0.0 when not given) and print a "
                            "warning: anyone who can reach the port can play, resign, change settings and "
                            "delete saved games, but not start programs (engines, engine matches: only "
                            "from this machine)")
        p.add_argument("--data-dir", default=None,
                       help="where the SQLite file lives (default: $XIANGQI_DATA_DIR or the user data dir)")
        if browser:
            p.add_argument("--no-browser", dest="open_browser", action="store_false",
                           help="print the URL only, do not open a browser")
        else:
            p.add_argument("--public", action="store_true",
                           help="a public server for online play: accounts, lobby, rated games, "
                                "spectators (docs/ONLINE_API.md); the local game's routes are closed. "
                                "Default port 8000; --host as given (put it behind an https proxy)")
            p.add_argument("--db", default=None, metavar="URL",
                           help="with --public: the online database (SQLAlchemy URL, e.g. "
                                "postgresql+psycopg://…; default: online.db in the data dir)")
            p.add_argument("--redis", default=None, metavar="URL",
                           help="with --public and --db: Redis pub/sub (redis://host:6379/0 or "
                                "unix:///path.sock) so that several server processes on one database "
                                "share games, seeks and challenges (DESIGN.md, Online)")
            p.add_argument("--trust-proxy", default=None, metavar="ADDR[,ADDR]",
                           help="with --public: the reverse proxies in front (IP addresses or networks, "
                                "e.g. 127.0.0.1 or 10.0.0.0/8) whose X-Forwarded-For names the client; "
                                "default: none, every limit counts the connection's own address")
        p.set_defaults(func=cmd_play, open_browser=browser)

    p = sub.add_parser("online-flags", help="list accounts that keep playing rated games against each other "
                                            "from one address (a public server's rating farming flags)")
    p.add_argument("--db", default=None, help="the public server's online database (SQLAlchemy URL, its "
                                              "--db; default: online.db in the data dir)")
    p.add_argument("--data-dir", default=None, help="the data dir of the default online.db")
    p.add_argument("--min-games", type=int, default=None, metavar="N",
                   help="rated games from one address that flag a pair (default 3)")
    p.add_argument("--days", type=float, default=None, metavar="D",
                   help="within the last D days (default 30)")
    p.add_argument("--json", action="store_true",
                   help="JSON lines: {user_lo, user_hi, names, games, addresses, first, last, game_ids}")
    p.set_defaults(func=cmd_online_flags)

    p = sub.add_parser("engine", help="speak UCI or UCCI on stdin/stdout (for GUIs and matches)",
                       description="The built-in engine as a UCI/UCCI engine: send 'uci' or 'ucci' first. "
                                   "It answers at once; on a fresh install its search kernels compile in the "
                                   "background (a timed 'go' meanwhile uses a pure-Python search).")
    p.add_argument("--warmup", action="store_true",
                   help="compile (or load from the cache) the search kernels, then exit: run once after "
                        "installing so that the first game starts at full strength")
    p.set_defaults(func=cmd_engine)

    p = sub.add_parser("match", help="play an engine match; prints the score and the Elo difference",
                       description="Engines: 'builtin', 'builtin:<level>' (novice, beginner, intermediate, "
                                   "advanced, master or 入门 初级 中级 高级 大师) or an engine command, "
                                   "e.g. fairy-stockfish.")
    p.add_argument("a", help="first engine (its score and Elo are reported)")
    p.add_argument("b", help="second engine")
    p.add_argument("--games", type=int, default=2,
                   help="number of games (pairs share an opening, colours swapped)")
    p.add_argument("--tc", default=None,
                   help="time control: 200ms or 0.2 per move (the default), 60+0.5 clock+increment, 40/60, "
                        "depth=6, nodes=N (揭棋: a time per move or depth=N; default each level's own)")
    p.add_argument("--variant", choices=("xiangqi", "random", "jieqi"), default="xiangqi",
                   help="random: 随机开局, a shuffle of rooks, horses and cannons per pair of games "
                        "(PGN tags Variant and Shuffle); jieqi: 揭棋 with hidden pieces; players "
                        "builtin[:1|2|3], random, greedy")
    p.add_argument("--seed", type=int, default=None,
                   help="the seed of the shuffles (random) or of the deals (揭棋): repeatable matches")
    p.add_argument("--tc-b", default=None,
                   help="B's time control when it differs from A's (--tc), e.g. --tc 1s --tc-b 200ms")
    p.add_argument("--concurrency", type=int, default=1,
                   help="games played at once, each with its own engine processes (results keep game order)")
    p.add_argument("--option-a", action="append", default=[], metavar="NAME=VALUE",
                   help="engine option for A (repeatable)")
    p.add_argument("--option-b", action="append", default=[], metavar="NAME=VALUE",
                   help="engine option for B (repeatable)")
    p.add_argument("--cwd-a", default=None, metavar="DIR",
                   help="folder A runs in (ElephantEye needs its book/evaluation files beside it)")
    p.add_argument("--cwd-b", default=None, metavar="DIR", help="folder B runs in")
    p.add_argument("--hash", type=int, default=64,
                   help="Hash in MB for engines that have the option (UCCI: hashsize)")
    p.add_argument("--openings", type=int, default=None, help="use only the first N openings of the set")
    p.add_argument("--openings-file", default=None, metavar="FILE",
                   help="openings from a file, one 'name<TAB>ICCS moves' a line (tools/book_openings.py "
                        "writes them from the opening book), instead of the built-in 16")
    p.add_argument("--first-game", type=int, default=1, metavar="N",
                   help="number the games from N and give them the openings and colours of games N, N+1, ... "
                        "(to continue a stopped match without replaying its openings; odd N starts a pair)")
    p.add_argument("--ply-cap", type=int, default=300, help="adjudicate a draw after this many plies")
    p.add_argument("--referee", choices=("ours", "pyffish"), default="ours",
                   help="who ends the games: our referee (the default) or pyffish, Fairy-Stockfish's rules "
                        "(an outside referee; ours still rules along and both tallies are printed)")
    p.add_argument("--time-margin", type=float, default=0.5,
                   help="seconds an engine may overdraw its clock before it loses on time")
    p.add_argument("--pgn", default="match.pgn", help="write the games here ('' for none)")
    # the defaults are match.runner.DEFAULT_START_TIMEOUT / DEFAULT_PING_TIMEOUT (not imported here:
    # building the parser stays cheap; tests/match/test_match_timeouts.py checks they agree)
    p.add_argument("--start-timeout", type=float, default=300.0, metavar="SECONDS",
                   help="seconds an engine may take to start, up to its first readyok (default 300: a first "
                        "start may compile for minutes on a loaded machine)")
    p.add_argument("--ping-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="seconds an engine may take to answer isready later, e.g. after ucinewgame "
                        "(default 120)")
    p.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"), default=None,
                   help="sequential probability ratio test of H0 'A is ELO0 stronger' against H1 'ELO1': "
                        "stops when a bound is crossed (--games is then the most games played)")
    p.add_argument("--sprt-prior", action="append", default=[], metavar="PGN",
                   help="count the games of A in this PGN (an earlier part of the same match) in the SPRT "
                        "first (repeatable; use new openings for the new games, e.g. --openings-file)")
    p.add_argument("--alpha", type=float, default=0.05, help="SPRT false-positive rate (default 0.05)")
    p.add_argument("--beta", type=float, default=0.05, help="SPRT false-negative rate (default 0.05)")
    p.add_argument("--sprt-model", choices=("pentanomial", "trinomial"), default="pentanomial",
                   help="outcomes per colour-swapped game pair (fishtest's pentanomial, the default) "
                        "or per game (W/D/L)")
    p.set_defaults(func=cmd_match)

    p = sub.add_parser("ecco", help="print each game's ECCO opening code and name, computed from its moves",
                       description="For every game of each record file (PGN, XQF, DhtmlXQ/UBB, EPD; folders "
                                   "are searched), print FILE[#game], the ECCO 2004 code and its name, "
                                   "tab-separated. An [ECCO] tag in the file is not used (see --compare). "
                                   "Exit 2 when a file could not be read, 1 when a game of a read file "
                                   "could not be classified (each named on stderr).")
    p.add_argument("files", nargs="+", metavar="FILE", help="record files or folders")
    p.add_argument("--compare", action="store_true",
                   help="also print the file's [ECCO] tag beside ours, and the agreement on stderr")
    p.add_argument("--plies", type=int, default=20, help="plies the classifier reads (default 20)")
    p.set_defaults(func=cmd_ecco)

    p = sub.add_parser("analyse", aliases=["analyze"],
                       help="review games: accuracy, ?! ? ?? per move, annotated PGN",
                       description="Search every position of every game of IN (PGN, XQF, DhtmlXQ/UBB, EPD) "
                                   "at a fixed depth, classify each move by the drop in win chance (best, "
                                   "good, inaccuracy ?!, mistake ?, blunder ??), confirm the candidate marks "
                                   "by a deeper search (--confirm) and print a summary table "
                                   "with each side's accuracy. Deterministic at fixed depth, for any --jobs.")
    p.add_argument("input", metavar="IN", help="record file to review ('-' for stdin)")
    p.add_argument("-o", "--output", metavar="OUT", default=None,
                   help="write the annotated PGN ([%%eval] comments, NAGs, better lines) here ('-': stdout)")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--depth", type=int, default=None, help="search depth per position (default 8)")
    limit.add_argument("--movetime", type=int, default=None, metavar="MS",
                       help="milliseconds per position instead of a depth (not deterministic)")
    p.add_argument("--jobs", type=int, default=None,
                   help="local processes (default 1; 0: one per CPU); with --cluster the tasks in flight "
                        "(default twice the cluster's threads)")
    p.add_argument("--cluster", metavar="tcp://HOST:PORT", default=None,
                   help="run the searches on this Dask distributed scheduler instead of local processes "
                        "(needs pyxiangqi[cluster]; the workers need pyxiangqi installed)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object per game per line on stdout (the table goes to stderr)")
    p.add_argument("--hash", type=int, default=16,
                   help="hash MB per process (results depend on it; default 16)")
    p.add_argument("--deep", type=int, default=None, metavar="N",
                   help="depth of the second pass: the positions around every candidate mark are "
                        "searched again this deep (default 0: none; docs/REVIEW.md, \"Trust\")")
    p.add_argument("--confirm", type=int, default=None, metavar="D",
                   help="confirmation depth: every candidate mark (a move losing >= 40 cp) is searched "
                        "again D plies deep, played move against best move; ? needs a 50 cp loss there, "
                        "?? 240 cp (default 11; 0: off, marks from the first pass alone). Costs about "
                        "4x the first pass's CPU time (~18 s against ~4 s per 100 plies). Our engine "
                        "only: off with --engine and --cluster. docs/REVIEW.md, \"Confirmation\"")
    p.add_argument("--engine", metavar="CMD", default=None,
                   help="review with this UCI or UCCI engine (a path, or a name on $PATH or in /usr/games, "
                        "e.g. fairy-stockfish or pikafish) instead of ours; --depth/--movetime are its own")
    p.add_argument("--engine-arg", action="append", default=[], metavar="ARG",
                   help="an argument for the engine's program (repeat for several; --engine-arg=-x for "
                        "one that starts with -)")
    p.add_argument("--engine-option", action="append", default=[], metavar="NAME=VALUE",
                   help="an engine option set after the handshake, e.g. Hash=64 (repeat for several; "
                        "Threads is 1 unless given, so that a depth-limited review is repeatable)")
    p.add_argument("--engine-protocol", choices=["auto", "uci", "ucci"], default="auto",
                   help="the engine's protocol (default auto: UCI, else UCCI)")
    p.add_argument("--engine-cp-scale", type=float, default=None, metavar="X",
                   help="the engine's centipawns per one of ours, for the win-chance curve (default: "
                        "measured for Fairy-Stockfish, else 1)")
    p.add_argument("--from", dest="input_format", choices=["pgn", "xqf", "dhtmlxq", "epd"], default=None,
                   help="input format (default: sniffed from the content)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_analyse)

    p = sub.add_parser("bench", help="print perft and search nodes/s")
    p.add_argument("--perft-depth", type=int, default=5, help="perft depth from the start position")
    p.add_argument("--search-depth", type=int, default=9, help="search depth per position (0: skip)")
    p.add_argument("--hash", type=int, default=64, help="Hash in MB for the search benchmark")
    p.add_argument("--peer", default=None,
                   help="also time this UCI engine's 'go perft' (e.g. /usr/games/fairy-stockfish) "
                        "and print the ratio")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("tb", help="endgame tablebases (残局库): generate and probe",
                       description="Tables live in $XIANGQI_DATA_DIR/tablebases or the user data dir "
                                   "(--dir DIR instead).")
    tbsub = p.add_subparsers(dest="tb_command", required=True)
    q = tbsub.add_parser("generate", help="generate endings, e.g. KRK KRKAABB (stronger side first)")
    q.add_argument("endings", nargs="*", metavar="ENDING",
                   help="FEN letters, stronger side first: K A B N R C P (H, E for horse, elephant)")
    q.add_argument("--default", action="store_true",
                   help="the default set (docs/TABLEBASES.md), smallest first; tables already present are "
                        "kept and an ending stopped midway resumes from its checkpoint, so the command "
                        "resumes where it stopped")
    q.add_argument("--max-indices", type=int, default=None, metavar="N",
                   help="with --default: only endings of at most N indices per side to move")
    q.add_argument("--list", action="store_true",
                   help="print the endings, their sizes, the memory a generation needs and whether present "
                        "(or a checkpoint)")
    q.add_argument("--checkpoint-minutes", type=float, default=15.0, metavar="M",
                   help="write a checkpoint (<ENDING>.ckpt.npz, the size of the table in memory) every M "
                        "minutes of an ending's generation; a stopped generation resumes from it (default "
                        "15; 0: none)")
    q.add_argument("--dir", default=None, help="table directory (default: the data dir's tablebases)")
    q.add_argument("--force", action="store_true", help="generate again even if the file exists")
    q.add_argument("--rules", choices=["cxa-check", "pure-mate"], default="cxa-check",
                   help="the repetition model: cxa-check (default) = one-sided perpetual check loses for "
                        "the checker; pure-mate = only mates count, every other position is a draw. A "
                        "table of the other model is converted in place (only the rule passes run, or "
                        "its rule results become draws); sub-endings of either model are used as they are "
                        "by a pure-mate table")
    q.set_defaults(func=cmd_tb_generate)
    q = tbsub.add_parser("probe", help="print win/draw/loss, distance to mate and the best moves of FEN")
    q.add_argument("fen", metavar="FEN", help="the position (quote it)")
    q.add_argument("--dir", default=None, help="table directory (default: the data dir's tablebases)")
    q.add_argument("--json", action="store_true",
                   help='print {"wdl": "win|draw|loss", "dtm": plies or null, "best": [ICCS moves], '
                        '"rule": "perpetual-check" or null, "rules": "cxa-check|pure-mate" (the table\'s '
                        'model)}')
    q.set_defaults(func=cmd_tb_probe)

    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``xiangqi`` console script."""
    try:
        # building the parser imports every command's package (SQLAlchemy among them), which takes
        # seconds on a busy machine: a Ctrl-C then is the user's too and ends the program the same way
        parser = build_parser()
    except KeyboardInterrupt:
        return 130
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except XiangqiError as exc:
        print(f"xiangqi {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`xiangqi db search … | head`): stop quietly, as Unix tools do; stdout
        # is pointed at /dev/null so that the interpreter's final flush does not raise again
        # (the recipe of the Python docs, "Note on SIGPIPE" in the signal module)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by a closed pipe

