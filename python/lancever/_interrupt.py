"""Ctrl-C during a C call: stop the call at its next storage operation, then raise
KeyboardInterrupt.

While a ctypes call runs, Python's own SIGINT handler cannot run (the main thread is in
C), and when the library calls back into Python (cleanup's progress), a KeyboardInterrupt
raised there cannot unwind through C: ctypes prints "Exception ignored" and drops it.  So
for the duration of a call made from the main thread, while SIGINT has Python's default
handler:

* SIGINT's handler only records the interrupt and interrupts the dataset's storage
  handle (``lv_storage_interrupt``), so a callback never raises;
* ``signal.set_wakeup_fd`` points at a pipe that a watcher thread reads: the C-level
  handler writes the signal number there at once, even while the main thread is in C,
  and the watcher interrupts the storage handle then.

An interrupted handle fails every later storage operation before it reaches the store
(nothing more is read, written or deleted), so the call returns at its next storage
operation with an error; the guard lifts the interruption, restores the handler and the
wakeup fd, and raises KeyboardInterrupt (the library's error as its ``__context__``).
lancever writes history before it deletes anything, so a call stopped there loses none.
Calls from other threads, or under a handler the application installed, are left as
they are.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any, Optional

from . import _lib


class Guard:
    """``with Guard(storage_ptr): <one C call>``."""

    def __init__(self, storage: Optional[int]):
        self.storage = storage
        self.active = False
        self.interrupted = False

    def _interrupt(self) -> None:
        self.interrupted = True
        if self.storage:
            _lib.lib().lv_storage_interrupt(self.storage, True)

    def _handler(self, signum: int, frame: Any) -> None:
        self._interrupt()

    def _watch(self) -> None:
        while True:
            try:
                data = os.read(self._r, 64)
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data and not self._done:
                self._interrupt()
            if self._done:
                return

    def __enter__(self) -> "Guard":
        if (threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
            return self
        self._done = False
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)
        try:
            self._old_fd = signal.set_wakeup_fd(self._w, warn_on_full_buffer=False)
        except (ValueError, OSError):
            os.close(self._r)
            os.close(self._w)
            return self
        self._old_handler = signal.signal(signal.SIGINT, self._handler)
        self._thread = threading.Thread(target=self._watch, name="lancever-sigint", daemon=True)
        self._thread.start()
        self.active = True
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if not self.active:
            return
        self.active = False
        signal.signal(signal.SIGINT, self._old_handler)
        signal.set_wakeup_fd(self._old_fd)
        self._done = True
        try:
            os.write(self._w, b"\0")
        except OSError:
            pass
        self._thread.join()
        os.close(self._r)
        os.close(self._w)
        if self.storage:
            _lib.lib().lv_storage_interrupt(self.storage, False)
        if self.interrupted:
            raise KeyboardInterrupt
