"""``xiangqi match`` with engines given relative to the current folder: the program and its path
arguments are made absolute (:func:`xiangqi.engine.uci.commands.resolve_command`, the helper the page uses
for added engines) before any engine is started, and a missing program is a clear exit-2 error."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import xiangqi.match.runner as match_module
from xiangqi.cli import main

FAKE = str(Path(__file__).resolve().parent.parent / "engine" / "fake_engine.py")


class _Stop(Exception):
    pass


def test_relative_engine_paths_are_made_absolute_before_the_match(tmp_path, monkeypatch):
    script = tmp_path / "eng" / "fake"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE} first \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    (tmp_path / "net.bin").write_bytes(b"x")
    seen = []

    def fake_run_match(a, b, *args, **kwargs):
        seen.extend([a, b])
        raise _Stop

    monkeypatch.setattr(match_module, "run_match", fake_run_match)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(_Stop):
        main(["match", "eng/fake --net=net.bin -v", "builtin:novice", "--games", "2"])
    a, b = seen
    assert a.command == [str(script), f"--net={tmp_path / 'net.bin'}", "-v"]
    assert b.command == [sys.executable, "-m", "xiangqi.cli", "engine"]  # builtin: untouched


def test_a_missing_engine_program_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["match", "./no-such-engine", "builtin", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert f"engine A (./no-such-engine): {os.path.join(tmp_path, 'no-such-engine')}: no such file" in err


def test_cwd_options_reach_the_players_and_a_missing_folder_is_named(tmp_path, monkeypatch, capsys):
    seen = []

    def fake_run_match(a, b, *args, **kwargs):
        seen.extend([a, b])
        raise _Stop

    monkeypatch.setattr(match_module, "run_match", fake_run_match)
    with pytest.raises(_Stop):
        main(["match", "builtin", f"{sys.executable} {FAKE} eleeye-331", "--games", "2",
              "--cwd-b", str(tmp_path)])
    assert [seen[0].cwd, seen[1].cwd] == [None, str(tmp_path)]
    assert main(["match", "builtin", "builtin", "--games", "2", "--cwd-a", str(tmp_path / "nope")]) == 2
    assert f"--cwd-a: '{tmp_path / 'nope'}' is not a folder" in capsys.readouterr().err
