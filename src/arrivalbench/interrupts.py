"""Ctrl-C and SIGTERM during grading, made reliable.

A SIGINT that arrives while DuckDB executes a statement is turned by DuckDB into an interrupted
query, and such an error can surface where the harness reads it as the pipeline's own failure (an
ERROR verdict) instead of the user's wish to stop. So while grading, a Ctrl-C is also remembered,
and the next replay that completes raises KeyboardInterrupt if one was absorbed on the way; so is
a SIGTERM that `stop` handles.

A stop must not cut a step in the middle that leaves something behind (a child process started
but not yet where its cleanup finds it, a child killed but its scratch folder not yet removed):
such a step runs `deferred`, and the stop arrives when it is done.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers

_pressed = False


def pressed() -> bool:
    """Whether Ctrl-C was pressed while `watching` was in force, or SIGTERM arrived at `stop`."""
    return _pressed


def check() -> None:
    """Raise KeyboardInterrupt if a Ctrl-C was pressed and absorbed on the way."""
    if _pressed:
        raise KeyboardInterrupt


def stop(_signum: int, _frame: FrameType | None) -> None:
    """A signal handler for a polite stop (SIGTERM): unwind as Ctrl-C does, and remember it
    (an engine may absorb the KeyboardInterrupt as an error of its own)."""
    global _pressed
    _pressed = True
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


_HELD: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while the block runs, then deliver them to the handlers they
    would have reached: for a step that a stop must not cut in the middle. Only the main thread
    runs signal handlers; in any other no signal raises, and nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous: dict[int, Handler] = {}
    try:
        for number in _HELD:
            handler = signal.getsignal(number)
            if handler is None or handler == signal.SIG_IGN:
                continue  # installed outside Python (left alone), or ignored anyway
            previous[number] = handler  # before the swap: a restore then changes nothing
            signal.signal(number, lambda signum, _frame: held.append(signum))
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(held):
            signal.raise_signal(number)
