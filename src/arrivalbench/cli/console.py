"""The console every command prints through."""

from __future__ import annotations

from rich.console import Console


# Rich wraps at word boundaries to the terminal's width (80 columns when not a terminal and
# COLUMNS is unset), so nothing is cut at a box edge when piped.
class _Console(Console):
    def on_broken_pipe(self) -> None:
        """Rich's own handler exits 1, the status of a verdict; hand it to `main`."""
        self.quiet = True
        raise BrokenPipeError


out = _Console(highlight=False)
