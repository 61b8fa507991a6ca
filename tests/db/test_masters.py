"""The master games shipped in the package (xiangqi.db.masters) and the importer's progress reports
(ImportProgress): phases, bytes read, compressed record files, `xiangqi db import --masters`."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest
from sqlalchemy import func, select

from xiangqi.db import connect, import_paths
from xiangqi.db import masters as masters_mod
from xiangqi.db.importer import ImportProgress, input_bytes
from xiangqi.db.schema import games

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "masters-sample.pgn.xz"  # the first 40 games of the shipped file


def test_the_shipped_file_holds_the_master_games_and_its_credit():
    path = masters_mod.masters_path()
    assert path.name == "masters.pgn.xz"
    assert path.stat().st_size < 4_000_000  # a compact file: 3.4 MB
    text = lzma.decompress(path.read_bytes()).decode("utf-8")
    assert text.count("\n[Result ") + text.startswith("[Result ") == masters_mod.MASTER_GAMES == 28225
    assert text.startswith('[Event "張雄飛先負楊官璘(1955.5於北京)"]')
    notice = (path.parent / "NOTICE.md").read_text(encoding="utf-8")
    assert "Yu-Han Tseng and Bo-Nian Chen (2026)" in notice and "CC BY 4.0" in notice
    assert "MIT License" in notice


def test_a_compressed_pgn_is_read_and_progress_goes_read_counts_done(tmp_path):
    engine = connect(f"sqlite:///{tmp_path / 'g.db'}")
    seen: list[tuple[str, int, int, int]] = []

    def progress(p: ImportProgress) -> None:
        seen.append((p.phase, p.done, p.total, p.report.games))

    report = import_paths(engine, [SAMPLE], progress=progress)
    assert (report.files, report.games, report.added, report.skipped) == (1, 40, 40, 0)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(games)).scalar_one() == 40
    total = SAMPLE.stat().st_size
    assert input_bytes([SAMPLE]) == total
    phases = [s[0] for s in seen]
    # reading first, then the explorer's counts (master games were added), then done, in that order
    assert phases[0] == "read" and phases[-1] == "done" and "counts" in phases
    assert phases.index("counts") > max(i for i, p in enumerate(phases) if p == "read")
    assert all(s[2] == total for s in seen)
    dones = [s[1] for s in seen]
    assert dones == sorted(dones) and dones[-1] == total
    assert seen[-1][3] == 40


def test_progress_over_a_folder_and_a_tarball_reaches_their_size(tmp_path):
    engine = connect(f"sqlite:///{tmp_path / 'g.db'}")
    folder = DATA / "corpus" / "ccpd"
    last: list[ImportProgress] = []
    import_paths(engine, [folder], progress=last.append)
    size = sum(p.stat().st_size for p in folder.glob("*.pgn"))
    assert input_bytes([folder]) == size
    assert last[-1].phase == "done" and last[-1].done == last[-1].total == size
    assert last[-1].fraction == 1.0


def test_a_broken_compressed_file_is_a_problem_not_a_crash(tmp_path):
    bad = tmp_path / "broken.pgn.xz"
    bad.write_bytes(b"\xfd7zXZ\x00not really xz")
    engine = connect(f"sqlite:///{tmp_path / 'g.db'}")
    report = import_paths(engine, [bad])
    assert report.games == 0
    assert len(report.problems) == 1 and "cannot decompress (lzma)" in report.problems[0].reason


def test_import_masters_imports_the_shipped_file_once(tmp_path, monkeypatch):
    monkeypatch.setattr(masters_mod, "masters_path", lambda: SAMPLE)
    engine = connect(f"sqlite:///{tmp_path / 'g.db'}")
    first = masters_mod.import_masters(engine)
    again = masters_mod.import_masters(engine)
    assert (first.added, again.added, again.duplicates) == (40, 0, 40)


def test_cli_db_import_masters_and_no_path(tmp_path, monkeypatch, capsys):
    from xiangqi.cli import main

    monkeypatch.setattr(masters_mod, "masters_path", lambda: SAMPLE)
    db = tmp_path / "g.db"
    assert main(["db", "import", "--masters", "--db", str(db)]) == 0
    assert "40 added" in capsys.readouterr().out
    assert main(["db", "import", "--db", str(db)]) == 2
    assert "give --masters" in capsys.readouterr().err


def test_cli_progress_bar_draws_the_phases(tmp_path):
    """The rich bar of `db import` (on a terminal): its text ends at the phase reached."""
    import io

    from rich.console import Console
    from rich.progress import Progress

    from xiangqi.db.cli import _ImportBar

    out = io.StringIO()
    with Progress(console=Console(file=out, force_terminal=True, width=100)) as progress:
        bar = _ImportBar(progress)
        engine = connect(f"sqlite:///{tmp_path / 'g.db'}")
        import_paths(engine, [SAMPLE], progress=bar.update)
        task = progress.tasks[0]
        assert task.description == "done"
        assert task.completed == task.total == SAMPLE.stat().st_size
        assert "40 games, 40 added" in task.fields["games"]


@pytest.mark.parametrize("name", ["a.pgn.gz", "a.pgn.bz2"])
def test_gzip_and_bzip2_record_files(tmp_path, name):
    import bz2
    import gzip

    raw = lzma.decompress(SAMPLE.read_bytes())
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else bz2.compress(raw))
    engine = connect(f"sqlite:///{tmp_path / 'g.db'}")
    assert import_paths(engine, [tmp_path]).added == 40  # found in a folder too
