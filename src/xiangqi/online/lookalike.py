"""Look-alike usernames: the confusable skeleton of Unicode Technical Standard #39 (UTS #39, "Unicode
Security Mechanisms", section 4 "Confusable Detection").

UTS #39 defines ``skeleton(X)``: convert X to NFD, remove every Default_Ignorable_Code_Point
character, replace each character by its prototype from the data file ``confusables.txt`` (the
characters without a line stand for themselves), and convert to NFD again. Two strings are
confusable when their skeletons are equal: ``аdmin`` (Cyrillic а, U+0430) and ``admin`` both give
``adrnin`` (``m`` → ``rn`` is a line of the file too), while ``adm1n`` gives ``adrnln`` (``1`` → ``l``):
it looks like ``admln``, not ``admin``. Nothing beyond the file is assumed.

A username's key (:func:`username_skeleton`, the ``users.username_skeleton`` column, unique) is
``casefold(skeleton(casefold(NFKC(name))))``: NFKC and case folding first (full-width letters and
case are one name already: ``ＡｄＭｉｎ`` is ``admin``), the skeleton, and a last fold because the
file's prototypes are sometimes capitals (``0`` → ``O``: ``g00d`` and ``good`` are one key).

The data: Unicode's ``confusables.txt`` of Unicode 13.0.0 (dated 2020-02-13 in its header), shipped
unchanged and xz-compressed as ``online/data/confusables-13.0.0.txt.xz`` under Unicode's licence
(``online/data/NOTICE.md``). The version is fixed: the stored keys depend on the table, so a newer
table is a schema change (a migration recomputing the column, as ``0005`` fills it).
The Default_Ignorable_Code_Point set is derived as Unicode's
DerivedCoreProperties.txt derives it (:func:`default_ignorable`).
"""

from __future__ import annotations

import functools
import unicodedata

__all__ = ["skeleton", "username_skeleton", "default_ignorable", "table", "DATA_VERSION"]

#: The Unicode version of the confusables.txt read (its header's ``Version:`` line is checked).
DATA_VERSION = "13.0.0"

# PropList.txt's Other_Default_Ignorable_Code_Point and Variation_Selector, as code point ranges.
_OTHER_DI = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x2065, 0x2065), (0x3164, 0x3164),
             (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0000), (0xE0002, 0xE001F),
             (0xE0080, 0xE00FF), (0xE01F0, 0xE0FFF))
_VARIATION = ((0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
# Cf characters that are not default-ignorable: the interlinear annotation characters, the Egyptian
# hieroglyph format controls and the prepended concatenation marks (DerivedCoreProperties.txt).
_NOT_DI = ((0xFFF9, 0xFFFB), (0x13430, 0x1343F), (0x0600, 0x0605), (0x06DD, 0x06DD), (0x070F, 0x070F),
           (0x0890, 0x0891), (0x08E2, 0x08E2), (0x110BD, 0x110BD), (0x110CD, 0x110CD))


def _within(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def default_ignorable(ch: str) -> bool:
    """Whether the character ``ch`` has Default_Ignorable_Code_Point: Other_Default_Ignorable_Code_Point
    + format characters (Cf) + Variation_Selector, less White_Space, U+FFF9..FFFB, U+13430..1343F
    and Prepended_Concatenation_Mark (the derivation in DerivedCoreProperties.txt)."""
    cp = ord(ch)
    if _within(cp, _OTHER_DI) or _within(cp, _VARIATION):
        return True
    return unicodedata.category(ch) == "Cf" and not ch.isspace() and not _within(cp, _NOT_DI)


@functools.cache
def table() -> dict[str, str]:
    """The prototype of every character that confusables.txt maps (``{source: prototype}``).

    Each data line is ``source ; target ; type # comment``, code points in hex, the target a sequence
    (UTS #39 section 4.1). Raises :class:`RuntimeError` naming the file when it is missing or of
    another Unicode version than :data:`DATA_VERSION`."""
    import lzma
    from pathlib import Path

    path = Path(__file__).with_name("data") / f"confusables-{DATA_VERSION}.txt.xz"
    try:
        text = lzma.decompress(path.read_bytes()).decode("utf-8-sig")
    except (OSError, lzma.LZMAError, UnicodeDecodeError) as exc:
        raise RuntimeError(f"{path}: the Unicode confusables data is missing or damaged: {exc}") from exc
    if f"# Version: {DATA_VERSION}" not in text[:1000]:
        raise RuntimeError(f"{path}: not the confusables.txt of Unicode {DATA_VERSION} that the stored "
                           "username keys were made with")
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        fields = [f.strip() for f in data.split(";")]
        try:
            src = chr(int(fields[0], 16))
            out[src] = "".join(chr(int(cp, 16)) for cp in fields[1].split())
        except (IndexError, ValueError) as exc:
            raise RuntimeError(f"{path}, line {n}: not 'source ; target ; type': {line!r}") from exc
    return out


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text`` (section 4: NFD, default-ignorables removed, each character's
    prototype, NFD)."""
    protos = table()
    nfd = unicodedata.normalize("NFD", text)
    mapped = "".join(protos.get(ch, ch) for ch in nfd if not default_ignorable(ch))
    return unicodedata.normalize("NFD", mapped)


def username_skeleton(name: str) -> str:
    """The key two usernames share when they look alike: ``casefold(skeleton(casefold(NFKC(name))))``
    (module text)."""
    return skeleton(unicodedata.normalize("NFKC", name).casefold()).casefold()
