"""The console every command prints through."""

from __future__ import annotations

import io
import re
import sys
from typing import IO, cast

from rich.console import Console
from rich.file_proxy import FileProxy

_TRAILING = re.compile(r"[ \t]+(?=\n|$)")


class _Stdout:
    """Standard output as the console writes to it: whichever `sys.stdout` is current when it
    writes (pytest and click's test runner swap it), without the spaces rich pads lines to the
    width with when the output is not a terminal (a file, a pipe, a diff between two runs).
    Rich writes all it renders for one `print` in one call, so no line is split between two
    writes. Not an `io.IOBase`: one of those flushes itself when collected, which could fail
    on a closed pipe at exit."""

    def __init__(self, console: Console) -> None:
        self._console = console

    @staticmethod
    def _stream() -> IO[str] | None:
        # A progress bar on standard error swaps sys.stdout for a proxy that prints above the
        # bar; the console writes past it to standard output, as rich's own default does.
        stream: IO[str] | None = sys.stdout
        return stream.rich_proxied_file if isinstance(stream, FileProxy) else stream

    def write(self, text: str) -> int:
        stream = self._stream()
        if stream is not None:
            stream.write(text if self._console.is_terminal else _TRAILING.sub("", text))
        return len(text)

    def flush(self) -> None:
        stream = self._stream()
        if stream is not None:
            stream.flush()

    def isatty(self) -> bool:
        stream = self._stream()
        return stream is not None and stream.isatty()

    def fileno(self) -> int:
        stream = self._stream()
        if stream is None:
            raise io.UnsupportedOperation("no standard output")
        return stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._stream(), "encoding", None) or "utf-8"


# Rich wraps at word boundaries to the terminal's width (80 columns when not a terminal and
# COLUMNS is unset), so nothing is cut at a box edge when piped.
class _Console(Console):
    def __init__(self) -> None:
        super().__init__(file=cast(IO[str], _Stdout(self)), highlight=False)

    def on_broken_pipe(self) -> None:
        """Rich's own handler exits 1, the status of a verdict; hand it to `main`."""
        self.quiet = True
        raise BrokenPipeError


out = _Console()
