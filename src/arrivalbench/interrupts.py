"""Ctrl-C during grading, made reliable.

A SIGINT that arrives while DuckDB executes a statement is turned by DuckDB into an interrupted
query, and such an error can surface where the harness reads it as the pipeline's own failure (an
ERROR verdict) instead of the user's wish to stop. So while grading, a Ctrl-C is also remembered,
and the next replay that completes raises KeyboardInterrupt if one was absorbed on the way.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_pressed = False


def pressed() -> bool:
    """Whether Ctrl-C was pressed while `watching` was in force."""
    return _pressed


def check() -> None:
    """Raise KeyboardInterrupt if a Ctrl-C was pressed and absorbed on the way."""
    if _pressed:
        raise KeyboardInterrupt


def stop(_signum: int, _frame: FrameType | None) -> None:
    """A signal handler for a polite stop (SIGTERM): unwind as Ctrl-C does."""
    raise KeyboardInterrupt


def _on_sigint(_signum: int, _frame: FrameType | None) -> None:
    global _pressed
    _pressed = True
    raise KeyboardInterrupt


@contextmanager
def watching() -> Iterator[None]:
    """Remember every Ctrl-C while in force (the main thread only: a handler lives there)."""
    global _pressed
    _pressed = False
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
