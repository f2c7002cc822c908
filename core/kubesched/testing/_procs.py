"""Child processes that cannot outlive the Python process that started them.

Each child runs in its own session (so a terminal's Ctrl-C reaches only the parent, which then
stops the children in order), is killed by the kernel if the parent dies without cleaning up
(``PR_SET_PDEATHSIG``), and is stopped at interpreter exit by an ``atexit`` hook. SIGTERM is
turned into ``KeyboardInterrupt`` in the main thread so that ``finally`` blocks and pytest's
fixture finalizers run for it as they do for Ctrl-C.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType

_PR_SET_PDEATHSIG = 1

try:
    _prctl: Callable[..., int] | None = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def _die_with_parent(parent_pid: int) -> Callable[[], None]:
    def preexec() -> None:
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        # The parent may have died between fork and prctl: then nobody would reap us.
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


class Child:
    """One long-running child process with its output in ``log_path``."""

    _live: set[Child] = set()
    _lock = threading.Lock()

    def __init__(
        self,
        name: str,
        args: Sequence[str],
        log_path: Path,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self._stopped = False
        self.args = list(args)
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            log.write(f"$ {' '.join(self.args)}\n".encode())
            log.flush()
            # PR_SET_PDEATHSIG fires when the *thread* that forked exits, so it is only safe
            # to ask for it from the main thread, which lives as long as the process.
            in_main_thread = threading.current_thread() is threading.main_thread()
            self.process = subprocess.Popen(
                self.args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=None if env is None else dict(env),
                start_new_session=True,
                preexec_fn=_die_with_parent(os.getpid()) if in_main_thread else None,
            )
        with Child._lock:
            Child._live.add(self)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM the child's process group, SIGKILL it after ``timeout``; return the exit code.

        Idempotent: once stopped, the group is never signalled again (its id may be reused).
        """
        if self._stopped:
            return self.process.returncode
        try:
            if self.alive():
                self._signal_group(signal.SIGTERM)
                try:
                    self.process.wait(timeout)
                except subprocess.TimeoutExpired:
                    self._signal_group(signal.SIGKILL)
                    self.process.wait(timeout)
                # Anything the child left in its group goes too (only now: the group id of a
                # child that exited long ago may belong to someone else by now).
                self._signal_group(signal.SIGKILL)
        finally:
            self._stopped = True
            with Child._lock:
                Child._live.discard(self)
        return self.process.returncode

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def log_tail(self, lines: int = 12) -> str:
        """The last ``lines`` lines of the child's output, for error messages."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    @classmethod
    def stop_all(cls) -> None:
        with cls._lock:
            children = list(cls._live)
        for child in children:
            child.stop(timeout=5.0)


atexit.register(Child.stop_all)


def _raise_keyboard_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def stop_on_sigterm() -> None:
    """Make SIGTERM unwind the main thread like Ctrl-C, unless someone else handles SIGTERM."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports that were free a moment ago on ``host``.

    Another process may still take one before our child binds it; callers retry on that.
    """
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether nothing listens on ``port`` (connections lingering in TIME_WAIT do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def http_get(url: str, context: ssl.SSLContext | None = None, timeout: float = 2.0) -> int:
    """The HTTP status of GET ``url``; 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, context=context, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return int(e.code)
    except (OSError, ssl.SSLError):
        return 0


def wait_for_ok(
    url: str,
    *,
    child: Child,
    timeout: float,
    context: ssl.SSLContext | None = None,
    interval: float = 0.1,
) -> None:
    """Poll ``url`` until it answers 200; ``RuntimeError`` if ``child`` dies or time runs out."""
    deadline = time.monotonic() + timeout
    status = 0
    while time.monotonic() < deadline:
        if not child.alive():
            raise RuntimeError(
                f"{child.name} exited with code {child.process.returncode} before {url} was ready; "
                f"its log {child.log_path} ends with:\n{child.log_tail()}"
            )
        status = http_get(url, context)
        if status == 200:
            return
        time.sleep(interval)
    raise RuntimeError(
        f"{child.name} was not ready after {timeout:.0f}s ({url} last answered "
        f"{status or 'nothing'}); its log {child.log_path} ends with:\n{child.log_tail()}"
    )
