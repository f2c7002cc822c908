"""The plain-text tables the commands print (a column per field, the message last, unpadded)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from kubesched.service.simulate import SimulationResult


def print_rows(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    """``rows`` (the header first) as aligned columns; the last column is not padded."""
    last = len(rows[0]) - 1
    widths = [max(len(row[i]) for row in rows) for i in range(last)]
    for row in rows:
        print(
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:last]))
            + "  "
            + row[last],
            file=out,
        )


def print_simulation(result: SimulationResult, out: TextIO) -> None:
    """One line per pod (namespace, name, node, message), then the summary line."""
    rows = [("NAMESPACE", "POD", "NODE", "MESSAGE")]
    rows += [(p.namespace, p.name, p.node or "<none>", p.message) for p in result.pods]
    print_rows(rows, out)
    summary = f"{result.scheduled} scheduled, {result.unschedulable} unschedulable"
    left_alone = result.left_alone_text()
    print(f"\n{summary}, {left_alone}" if left_alone else f"\n{summary}", file=out)
