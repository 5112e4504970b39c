"""Which characters a name or an advice text may not hold (protocol.md §13, 1.4).

Why: names and advice are shown to other people (the TUI, spectators, tournament
tables) and written into journals, which are JSON Lines. A control character can move a
terminal's cursor or recolour its text; an invisible reordering character (U+202E
RIGHT-TO-LEFT OVERRIDE and its kin) makes a name read as another; a line or paragraph
separator (U+2028, U+2029: categories Zl and Zp, *not* Cc or Cf) ends a "line" for
every reader that splits on Unicode line boundaries (Python's ``str.splitlines``, which
made journals unreadable). None of them has a use in a name or a sentence of advice.

Refused: Unicode categories Cc (controls), Cf (format) except U+200C ZERO WIDTH
NON-JOINER and U+200D ZERO WIDTH JOINER (emoji sequences such as the family 👨‍👩‍👧
and several scripts need them), Zl, Zp, and Cs (surrogates: msgpack str is UTF-8, whose
decoder refuses them, but an in-process client could still pass one).

Why a frozen table rather than ``unicodedata`` at import: the protocol must say the same
thing on every referee, whatever Unicode version its Python ships (3.11 has 14.0; 15.0
added U+13439-U+1343F to Cf). The table below is Unicode 15.1's; a test checks it covers
the running Python's categories, so a newer Unicode adding a format character is noticed.
"""

from __future__ import annotations

import re
import unicodedata

from .errors import ProtocolError

__all__ = [
    "ALLOWED_FORMAT", "REFUSED_CATEGORIES", "REFUSED_RANGES", "REFUSED_RE", "SCHEMA_PATTERN",
    "check_text", "describe", "refused_char",
]

#: Inclusive code point ranges refused in names and advice text (see the module docstring).
REFUSED_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x001F), (0x007F, 0x009F),  # Cc
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),  # Cf ...
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200B), (0x200E, 0x200F),
    (0x2028, 0x2028),  # Zl LINE SEPARATOR
    (0x2029, 0x2029),  # Zp PARAGRAPH SEPARATOR
    (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
    (0xD800, 0xDFFF),  # Cs
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
ALLOWED_FORMAT = frozenset({0x200C, 0x200D})  # ZWNJ, ZWJ


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


#: One character class for all of them: a single ``search`` per field (about 0.2 µs for a
#: 40-character name), and the act fast path never reaches it.
REFUSED_RE = re.compile(f"[{_class(REFUSED_RANGES)}]")

# protocol.schema.json's ``pattern`` (ECMA-262): the same rule for the Basic Multilingual
# Plane. Astral code points cannot be written in a class portably (``\u{...}`` needs the
# ``u`` flag; without it a string is UTF-16 code units, so excluding surrogates would
# refuse every emoji), so the astral ranges and the surrogates are protocol.md §13's text
# only. A lookahead rather than ``^[^...]*$``: Python's ``$`` also matches before a final
# newline, ECMA's does not; the lookahead means the same in both.
_BMP = tuple((a, b) for a, b in REFUSED_RANGES if b <= 0xFFFF and not (a >= 0xD800 and b <= 0xDFFF))
SCHEMA_PATTERN = "^(?![\\s\\S]*[" + "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in _BMP) + "])"


def describe(ch: str) -> str:
    """``U+2028 (LINE SEPARATOR)``: how an error names a character without containing it."""
    cp = ord(ch)
    name = unicodedata.name(ch, "")
    if not name:
        kind = {"Cc": "control", "Cf": "format", "Cs": "surrogate", "Cn": "unassigned"}.get(unicodedata.category(ch), "refused")
        name = f"a {kind} character"
    return f"U+{cp:04X} ({name})"


def refused_char(s: str) -> tuple[int, str] | None:
    """(index, character) of the first refused character of ``s``, or None if it has none.

    ``str.isprintable`` first: it is False for every category of Other and Separator but
    the ASCII space, a superset of the refused ones, and runs in C several times faster
    than the class search; nearly every name and advice is printable and stops there."""
    if s.isprintable():
        return None
    m = REFUSED_RE.search(s)
    return None if m is None else (m.start(), m.group())


def check_text(msg_type: str, field: str, value: object) -> None:
    """Raise ``bad_message`` if ``value`` (a string, or a list of them) holds a refused
    character; other types are left to the shape checks, which run first.

    An ``advise`` text is refused with ``bad_advice`` instead: that is what 1.3 answered
    (from the engine) for the C0 controls it refused, so a 1.3 client's handling holds."""
    items = [(field, value)] if isinstance(value, str) else (
        [(f"{field}[{i}]", v) for i, v in enumerate(value) if isinstance(v, str)] if isinstance(value, list) else []
    )
    for label, s in items:
        found = refused_char(s)
        if found is not None:
            i, ch = found
            raise ProtocolError(
                "bad_advice" if msg_type == "advise" else "bad_message",
                f"{msg_type}: field '{label}' holds {describe(ch)} at character {i}; names and advice text may not "
                "contain control, invisible format or line/paragraph separator characters (protocol.md §13)",
                request=msg_type,
            )
