"""Where each character of a YAML scalar's value is in its source, so that a position inside a CEL expression
(`<input>:2:7`) can be shown at its line and column in the file, whatever the scalar's style: plain or quoted
(folded lines, escapes, `''`) and block scalars, literal (`|`) or folded (`>`).

Each style is scanned by YAML's rules (yaml.org/spec/1.2.2, chapters 7 and 8); the value rebuilt is checked against
the one the YAML parser produced, and a scalar it does not rebuild exactly gets no positions rather than wrong ones.
"""

from __future__ import annotations

_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
    "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}  # fmt: skip
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def value_positions(raw: str, style: str | None, value: str) -> list[int] | None:
    """For each character of `value`, its offset in `raw` (the scalar's source, quotes and block header included),
    plus one offset past the end; None when the scan does not rebuild `value`."""
    raw = raw.replace("\r\n", "\n")
    try:
        chars, offsets = _block(raw, folded=style == ">") if style in ("|", ">") else _flow(raw, style)
    except (IndexError, ValueError):
        return None
    text = "".join(chars)
    if text.rstrip("\n") != value.rstrip("\n") or not text.startswith(value.rstrip("\n")):
        return None
    kept = offsets[: len(value.rstrip("\n"))]
    end = kept[-1] + 1 if kept else (1 if style in ('"', "'") else 0)
    return kept + [end]


def _flow(raw: str, style: str | None) -> tuple[list[str], list[int]]:
    """Plain, single- and double-quoted scalars: line breaks fold (one to a space, each empty line to a newline),
    whitespace around them goes, and quoted scalars have their escapes."""
    chars: list[str] = []
    offsets: list[int] = []
    quoted = style in ('"', "'")
    i, end = (1, len(raw) - 1) if quoted else (0, len(raw))
    spaces: list[int] = []  # whitespace seen since the last character kept: kept only if the line goes on
    while i < end:
        c = raw[i]
        if c in " \t":
            spaces.append(i)
            i += 1
        elif c == "\n":
            spaces.clear()  # trailing whitespace before a break is dropped
            i = _fold(raw, i, end, chars, offsets)
        else:
            for offset in spaces:
                chars.append(raw[offset])
                offsets.append(offset)
            spaces.clear()
            if style == "'" and c == "'":  # '' is a quote
                chars.append("'")
                offsets.append(i)
                i += 2
            elif style == '"' and c == "\\":
                i = _escape(raw, i, end, chars, offsets)
            else:
                chars.append(c)
                offsets.append(i)
                i += 1
    if quoted:  # whitespace before the closing quote is the value's
        chars.extend(raw[offset] for offset in spaces)
        offsets.extend(spaces)
    return chars, offsets


def _fold(raw: str, i: int, end: int, chars: list[str], offsets: list[int]) -> int:
    """At a line break: a space if the next line has text, else a newline for each empty line; the next line's
    leading whitespace is dropped. Returns where the text goes on."""
    breaks = [i]
    i += 1
    while True:
        while i < end and raw[i] in " \t":
            i += 1
        if i < end and raw[i] == "\n":
            breaks.append(i)
            i += 1
            continue
        break
    if len(breaks) == 1:
        chars.append(" ")
        offsets.append(breaks[0])
    for offset in breaks[1:]:
        chars.append("\n")
        offsets.append(offset)
    return i


def _escape(raw: str, i: int, end: int, chars: list[str], offsets: list[int]) -> int:
    """A double-quoted escape at `i` (the backslash); an escaped line break joins the lines with nothing between."""
    code = raw[i + 1]
    if code == "\n":
        i += 2
        while i < end and raw[i] in " \t":
            i += 1
        return i
    if code in _HEX_ESCAPES:
        digits = _HEX_ESCAPES[code]
        chars.append(chr(int(raw[i + 2 : i + 2 + digits], 16)))
        offsets.append(i)
        return i + 2 + digits
    chars.append(_ESCAPES[code])  # KeyError: not an escape YAML has (the parser would have refused it)
    offsets.append(i)
    return i + 2


def _block(raw: str, folded: bool) -> tuple[list[str], list[int]]:
    """`|` and `>`: the lines after the header, less the content's indentation; `>` folds a break between two lines
    of text at that indentation into a space, and an empty line between into a newline."""
    header_end = raw.index("\n")
    indicator = next((int(c) for c in raw[:header_end] if c.isdigit()), 0)
    lines: list[tuple[int, str]] = []
    offset = header_end + 1
    for line in raw[header_end + 1 :].split("\n"):
        lines.append((offset, line))
        offset += len(line) + 1
    texts = [line for _, line in lines if line.strip()]
    if not texts or indicator:  # an explicit indentation counts from the parent's, which the scalar does not show
        raise ValueError("no positions")
    indent = len(texts[0]) - len(texts[0].lstrip(" "))
    chars: list[str] = []
    offsets: list[int] = []
    previous = ""  # the kind of the last line of text: "text", or "more" (more indented)
    empties: list[int] = []
    for start, line in lines:
        if not line.strip() and len(line) <= indent:
            empties.append(start + len(line))  # its line break
            continue
        more = line[indent : indent + 1] in (" ", "\t")
        if not previous:  # empty lines before the first are newlines
            chars.extend("\n" * len(empties))
            offsets.extend(empties)
        elif folded and previous == "text" and not more:
            if empties:  # the break goes; each empty line is a newline
                chars.extend("\n" * len(empties))
                offsets.extend(empties)
            else:
                chars.append(" ")
                offsets.append(start - 1)
        else:
            chars.extend("\n" * (len(empties) + 1))
            offsets.extend([start - 1, *empties])
        empties.clear()
        for column, c in enumerate(line[indent:], indent):
            chars.append(c)
            offsets.append(start + column)
        previous = "more" if more else "text"
    return chars, offsets
