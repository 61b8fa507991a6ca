"""The importer's own tar reader (``importer._plain_tar_members``) gives exactly what :mod:`tarfile` gives,
and hands archives it does not read to :mod:`tarfile` without losing or repeating a member."""

from __future__ import annotations

import gzip
import io
import tarfile

import pytest

from xiangqi.db import importer
from xiangqi.db.importer import iter_sources


def by_tarfile(path) -> list[tuple[str, bytes]]:
    with tarfile.open(path) as tar:
        return [(m.name, tar.extractfile(m).read()) for m in tar if m.isfile()]


def make_tar(path, fmt, members, mode="w:gz") -> None:
    with tarfile.open(path, mode, format=fmt) as tar:
        for name, data in members:
            if data is None:
                info = tarfile.TarInfo(name)
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


MEMBERS = [
    ("Dataset", None),
    ("Dataset/對局/大師對局/001.pgn", b"[Event \"a\"]\n1. h2e2 h9g7 *\n"),
    ("Dataset/empty.pgn", b""),
    ("Dataset/big.pgn", bytes(range(256)) * 5000),  # spans several reads and 512-byte blocks
    ("Dataset/" + "長" * 40 + "/x.pgn", b"long path"),  # 128 bytes of UTF-8: prefix field or long-name header
]


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT, tarfile.PAX_FORMAT])
@pytest.mark.parametrize("mode", ["w:gz", "w"])
def test_the_fast_reader_gives_tarfiles_members(tmp_path, fmt, mode):
    path = tmp_path / ("a.tar.gz" if mode == "w:gz" else "a.tar")
    make_tar(path, fmt, MEMBERS, mode)
    expected = by_tarfile(path)
    assert [n for n, _ in expected] == [n for n, d in MEMBERS if d is not None]
    got = [(n.split("::", 1)[1], d) for n, d in iter_sources([path], glob="*")]
    wanted = [(n, d) for n, d in expected if n.endswith(".pgn")]
    assert got == wanted


def test_plain_archives_are_read_by_the_fast_reader_alone(tmp_path):
    path = tmp_path / "a.tar.gz"
    make_tar(path, tarfile.GNU_FORMAT, MEMBERS[:4])
    assert list(importer._plain_tar_members(path)) == by_tarfile(path)


def test_a_long_name_header_goes_to_tarfile_after_the_members_before_it(tmp_path):
    # GNU format writes a long name as an extra ././@LongLink member: the fast reader stops there
    path = tmp_path / "a.tar.gz"
    make_tar(path, tarfile.GNU_FORMAT, MEMBERS)
    fast = importer._plain_tar_members(path)
    assert next(fast)[0] == "Dataset/對局/大師對局/001.pgn"
    with pytest.raises(importer._NotPlainTar):
        list(fast)
    got = [n.split("::", 1)[1] for n, _ in iter_sources([path])]
    assert got == [n for n, d in MEMBERS if d is not None]  # each once, in order


def test_a_cut_archive_is_a_problem_as_with_tarfile(tmp_path):
    path = tmp_path / "a.tar.gz"
    make_tar(path, tarfile.GNU_FORMAT, MEMBERS[:4])
    raw = gzip.decompress(path.read_bytes())
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(gzip.compress(raw[:512 * 5 + 100]))  # inside big.pgn's data
    problems: list = []
    got = [n.split("::", 1)[1] for n, _ in iter_sources([cut], problems=problems)]
    assert got == ["Dataset/對局/大師對局/001.pgn", "Dataset/empty.pgn"]
    assert len(problems) == 1 and "cannot read the archive" in problems[0].reason
    # a gzip stream cut short: tarfile's gzip reader fails, so the import reports it
    short = tmp_path / "short.tar.gz"
    short.write_bytes(path.read_bytes()[:-30])
    problems = []
    list(iter_sources([short], problems=problems))
    assert len(problems) == 1 and "cannot read the archive" in problems[0].reason


def test_a_bad_checksum_goes_to_tarfile(tmp_path):
    path = tmp_path / "a.tar"
    make_tar(path, tarfile.GNU_FORMAT, MEMBERS[:3], mode="w")
    raw = bytearray(path.read_bytes())
    raw[512 + 10] ^= 0x20  # the second header's name: its checksum no longer matches
    path.write_bytes(bytes(raw))
    with pytest.raises(importer._NotPlainTar):
        list(importer._plain_tar_members(path))
    problems: list = []
    got = list(iter_sources([path], problems=problems))
    # tarfile stops quietly at an invalid header after the first: only the folder's member came before
    assert got == [] and problems == []
