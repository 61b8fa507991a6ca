"""Shared test helpers for storage faults: a small tmpfs (a disk that fills up or turns read-only).

Mounting needs root on Linux; without it :func:`small_tmpfs` skips the test.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def mount_tmpfs(path: Path, size: str) -> bool:
    """Create ``path`` and mount a tmpfs of ``size`` (e.g. ``"2m"``) there; False when it cannot be done
    (not root, not Linux, mount refused)."""
    if os.geteuid() != 0 or sys.platform != "linux":
        return False
    path.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


def umount(path: Path) -> None:
    """Lazily unmount ``path`` (errors ignored)."""
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


def remount_read_only(path: Path) -> None:
    """Remount the tmpfs at ``path`` read-only; raises :class:`subprocess.CalledProcessError` if refused."""
    subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True)


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str,
                why: str = "needs root on Linux to mount a small tmpfs") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path`` for the ``with`` block, unmounted after; skips the test
    (with the reason ``why``) when it cannot be mounted."""
    if not mount_tmpfs(path, size):
        pytest.skip(why)
    try:
        yield path
    finally:
        umount(path)


def fill(path: Path) -> None:
    """Write the file ``path/filler`` until the file system is full (in ever smaller writes, down to
    one byte); remove that file to give the space back."""
    fd = os.open(path / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
