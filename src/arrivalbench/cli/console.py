"""The console every command prints through."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

_TRAILING = re.compile(r"[ \t]+(?=\n|$)")


# Rich wraps at word boundaries to the terminal's width (80 columns when not a terminal and
# COLUMNS is unset), so nothing is cut at a box edge when piped.
class _Console(Console):
    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        """What rich writes, without the spaces it pads lines to the width with when the
        output is not a terminal (a file, a pipe, a diff between two runs)."""
        text = super()._render_buffer(buffer)
        return text if self.is_terminal else _TRAILING.sub("", text)

    def on_broken_pipe(self) -> None:
        """Rich's own handler exits 1, the status of a verdict; hand it to `main`."""
        self.quiet = True
        raise BrokenPipeError


out = _Console(highlight=False)
