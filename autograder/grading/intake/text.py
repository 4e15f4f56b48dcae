"""Names and notes made printable and bounded: what a submission names is shown and stored only through these."""

import unicodedata

MAX_NAME = 100  # characters of a student's name as shown and stored
MAX_NOTE = 300  # characters of one note
MAX_NOTES = 30  # notes per submission (and per class); the rest are counted


def printable(text: str, limit: int = MAX_NAME) -> str:
    """text safe to show and store: no control or format characters, no lone surrogates, at most limit long.

    A byte that was not UTF-8 (os.listdir gives it as a surrogate escape) and every control character
    become a visible backslash escape (\\xe9, \\x1b, \\u202e), so the name still says what it was.
    Text that is already printable comes back unchanged.
    """
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the byte code - 0xDC00 was not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(char)
        if len(out) > limit:
            break
    shown = "".join(out)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def note(text: str) -> str:
    return printable(text, MAX_NOTE)


def capped(notes: list[str]) -> list[str]:
    """Distinct notes, in order, at most MAX_NOTES of them."""
    unique = list(dict.fromkeys(notes))
    if len(unique) <= MAX_NOTES:
        return unique
    return unique[: MAX_NOTES - 1] + [f"... and {len(unique) - MAX_NOTES + 1:,} more notes like these"]
