"""Ctrl-C during a C call: stop the call at its next storage operation, then raise
KeyboardInterrupt.

While a ctypes call runs, Python's own SIGINT handler cannot run (the main thread is in
C), and when the library calls back into Python (cleanup's progress), a KeyboardInterrupt
raised there cannot unwind through C: ctypes prints "Exception ignored" and drops it.  So
for the duration of a call made from the main thread, while SIGINT has Python's default
handler:

* SIGINT's handler only records the interrupt and interrupts the dataset's storage
  handle (``lv_storage_interrupt``), so a callback never raises;
* ``signal.set_wakeup_fd`` points at a pipe that a watcher thread reads (one per process,
  started on the first call): the C-level handler writes the signal number there at once,
  even while the main thread is in C, and the watcher interrupts the storage handle then.

An interrupted handle fails every later storage operation before it reaches the store
(nothing more is read, written or deleted), so the call returns at its next storage
operation with an error; the guard lifts the interruption, restores the handler and the
wakeup fd, and raises KeyboardInterrupt instead of the library's error.
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

# One watcher thread and its pipe per process, made on the first guarded call (and again in
# a fork()ed child, which inherits the pipe but not the thread).  `_active` is the guard of
# the call in progress on the main thread, or None: a byte that arrives between calls
# interrupts nothing.
_active: Optional["Guard"] = None
_active_lock = threading.Lock()  # the watcher never touches a handle whose call has ended
_MARK = 255  # not a signal number: written after an interrupted call, see Guard.__exit__
_drained = threading.Event()
_pipe: Optional[tuple] = None
_pipe_pid = 0


def _watch(r: int) -> None:
    while True:
        try:
            data = os.read(r, 64)
        except OSError:
            return
        if not data:
            return
        if signal.SIGINT in data:
            with _active_lock:
                if _active is not None:
                    _active.interrupt()
        if _MARK in data:
            _drained.set()


def _wakeup_fd() -> int:
    global _pipe, _pipe_pid
    if _pipe is None or _pipe_pid != os.getpid():
        if _pipe is not None:  # a fork()ed child: the parent's watcher is not here
            for fd in _pipe:
                os.close(fd)
        r, w = os.pipe()
        os.set_blocking(w, False)
        threading.Thread(target=_watch, args=(r,), name="lancever-sigint", daemon=True).start()
        _pipe, _pipe_pid = (r, w), os.getpid()
    return _pipe[1]


class Guard:
    """``with Guard(storage_ptr): <one C call>``."""

    def __init__(self, storage: Optional[int]):
        self.storage = storage
        self.active = False
        self.interrupted = False

    def interrupt(self) -> None:
        self.interrupted = True
        if self.storage:
            _lib.lib().lv_storage_interrupt(self.storage, True)

    def _handler(self, signum: int, frame: Any) -> None:
        self.interrupt()

    def __enter__(self) -> "Guard":
        global _active
        if (threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
            return self
        try:
            self._old_fd = signal.set_wakeup_fd(_wakeup_fd(), warn_on_full_buffer=False)
        except (ValueError, OSError):
            return self
        _active = self
        self._old_handler = signal.signal(signal.SIGINT, self._handler)
        self.active = True
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        global _active
        if not self.active:
            return
        self.active = False
        signal.signal(signal.SIGINT, self._old_handler)
        signal.set_wakeup_fd(self._old_fd)
        with _active_lock:
            _active = None
        if self.interrupted:
            # The SIGINT byte may still be in the pipe: let the watcher read it now, while no
            # call is active, or it would interrupt the next call.
            _drained.clear()
            try:
                os.write(_wakeup_fd(), bytes([_MARK]))
                _drained.wait(2.0)
            except OSError:
                pass
            if self.storage:
                _lib.lib().lv_storage_interrupt(self.storage, False)
            raise KeyboardInterrupt
