"""`xiangqi perft` as a user runs it: the count on the last line, and Ctrl-C stops it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from xiangqi.cli import main


@pytest.mark.parametrize("engine", ["numba", "core"])
def test_perft_prints_the_count_on_the_last_line(engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    fen = "4k4/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1"  # reported.md R2
    assert main(["perft", "--engine", engine, "--fen", fen, "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "290"


def test_ctrl_c_stops_a_long_perft_at_once() -> None:
    # The child says "ready" once the command line is imported (a busy machine can take many seconds
    # for that); the interrupt is sent after it, so it lands inside the command, as a user's Ctrl-C does.
    child = ("import sys, xiangqi.cli; sys.stderr.write('ready\\n'); sys.stderr.flush(); "
             "sys.exit(xiangqi.cli.main(['perft', '9']))")
    proc = subprocess.Popen(
        [sys.executable, "-c", child],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    assert proc.stderr.readline().strip() == "ready"
    time.sleep(2)  # inside the kernel by now (or still compiling it)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    """`xiangqi puzzles list --json | head -1` (300 kB, more than a pipe holds): the reader closes
    the pipe after one line; the command stops with 141 (128 + SIGPIPE) and no traceback, instead
    of a BrokenPipeError."""
    proc = subprocess.Popen([sys.executable, "-m", "xiangqi", "puzzles", "list", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does after its line
    _, err = proc.communicate(timeout=60)
    assert first.strip()
    assert proc.returncode == 141, err.decode(errors="replace")
    assert b"Traceback" not in err and b"BrokenPipe" not in err
