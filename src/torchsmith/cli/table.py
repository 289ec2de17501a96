"""Tables for people: rich's, fitted to the terminal (80 columns when piped), colour when allowed."""

from __future__ import annotations

import io
import textwrap
from typing import IO, Sequence

from torchsmith.output import paint, terminal_columns, use_color

__all__ = ["write_table"]


_SHORT = 24  # cells no longer than this are not wrapped ...
_PROSE_ROOM = 24  # ... while each longer column keeps this much
_WIDEST_WORD = 30  # a word longer than this (a URL) is cut in any layout


def _longest_word(text: str) -> int:
    """A column is never narrower than its longest word, or the word is cut mid-way."""
    return max((len(word) for word in text.split()), default=0)


def write_table(out: IO[str], header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """``rows`` under ``header``; long cells wrap inside their column, nothing runs past the width.
    A table with more columns than the width holds is written as one block per row instead."""
    width = terminal_columns()
    # A column with nothing in any row says nothing: left out (--json has every field).
    kept = [i for i, name in enumerate(header) if name == "?" or any(row[i] not in ("", "-") for row in rows)]
    header = [header[i] for i in kept]
    rows = [[row[i] for i in kept] for row in rows]
    needed = sum(min(_WIDEST_WORD, max(_longest_word(text) for text in [name, *(row[i] for row in rows)])) + 3
                 for i, name in enumerate(header))
    if needed > width:
        _write_records(out, header, rows, width)
        return
    _write_columns(out, header, rows, width)


def _write_records(out: IO[str], header: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> None:
    """Each row as its first real column, then ``field: value`` lines (the mark column first)."""
    color = use_color(out)
    for row in rows:
        mark, title = (row[0], row[1]) if header[0] == "?" else ("", row[0])
        fields = list(zip(header, row))[2 if header[0] == "?" else 1:]
        name = header[1] if header[0] == "?" else header[0]
        out.write(paint(f"{name}: {title}{' (unverified)' if mark else ''}", "1", color) + "\n")
        for name, value in fields:
            if value in ("", "-"):
                continue
            out.writelines(line + "\n" for line in textwrap.wrap(
                f"{name}: {value}", width, initial_indent="  ", subsequent_indent="      ",
                break_on_hyphens=False, break_long_words=False))


def _write_columns(out: IO[str], header: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    color = use_color(out)
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, no_color=not color,
                      highlight=False, emoji=False, markup=False, soft_wrap=False)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  header_style="bold" if color else "")
    # no_wrap keeps the header on one line too: its whole length counts.
    longest = [max([len(name), *(len(row[index]) for row in rows)]) for index, name in enumerate(header)]
    short = [n <= _SHORT for n in longest]
    # Short cells (a version, a name) on one line, when the prose columns keep room enough.
    room = width - sum(n + 3 for n, is_short in zip(longest, short) if is_short)
    keep_short = room >= _PROSE_ROOM * short.count(False)
    for index, name in enumerate(header):
        if keep_short and short[index]:
            table.add_column(name, no_wrap=True, min_width=longest[index])
        else:
            table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    out.writelines(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())  # no padding
