"""Compiling in a process of its own, so that the process that serves never holds what a
compile leaves behind (issue 17: serving peak at or below eager's).

A first torch.export leaves 25-36 MiB resident that nothing hands back (the modules it
imports lazily), and the compiler's code and data stay mapped after it ran
(docs/performance.md). thunder.compile therefore runs the compile in a fork of the
caller: the child sees the module as it is, runs torch.export and the compiler, publishes
the library into the cache and sends back, pickled through a pipe, what the caller needs
to load it; the caller then loads the library with its module's own tensors, which the
library reads in place. The child's progress lines are relayed to the caller's.

A fork is used where it is safe (`unavailable` says why not): Linux, the cpu target, an
nn.Module, CUDA not initialized, called from the main thread and no other Python thread
running but tqdm's monitor (a lock another thread held at the fork would stay held in the
child; the child takes fresh tqdm locks, and never uses the progress line's timer thread
or its lock, which the caller has). THUNDER_COMPILE_IN_PROCESS=1 turns it off.
"""
from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import threading
import traceback
import warnings
from typing import Any, Callable

import torch

from . import _C

__all__ = ["Phases", "Relay", "RetryInProcess", "run", "unavailable"]


def unavailable(target: str, model: Any) -> str | None:
    """Why this compile cannot run in a forked process, or None when it can."""
    if os.environ.get("THUNDER_COMPILE_IN_PROCESS", "") not in ("", "0"):
        return "THUNDER_COMPILE_IN_PROCESS is set"
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return "forking a compile is only done on Linux"
    if target != "cpu":
        return f"the {target} target compiles in process"
    if not isinstance(model, torch.nn.Module) or isinstance(model, torch.jit.ScriptModule):
        return "only an nn.Module is compiled in a process of its own"
    if torch.cuda.is_initialized():
        return "CUDA is initialized (a forked child cannot use it)"
    if threading.current_thread() is not threading.main_thread():
        return "thunder.compile was called from a thread other than the main one"
    others = [t for t in threading.enumerate()
              if t is not threading.current_thread() and not _tqdm_monitor(t)]
    if others:
        return f"other Python threads are running ({', '.join(t.name for t in others)})"
    return None


def _tqdm_monitor(thread: threading.Thread) -> bool:
    """tqdm's monitor, which any torch.export in the process starts (torch.fx's
    interpreter makes a progress bar) and which never ends: it only takes tqdm's lock
    for a moment now and then, and the child takes a lock of its own (_child)."""
    return type(thread).__name__ == "TMonitor" and type(thread).__module__.startswith("tqdm")


class Phases:
    """`phase(name, seconds)` as a piece of a progress line ("built 3.1s"), for classes
    with `add(piece)`."""

    def phase(self, name: str, seconds: float) -> None:
        self.add(f"{name} {seconds:.1f}s")


class Relay(Phases):
    """The child's progress, sent to the caller's progress line."""

    def __init__(self, send: Callable[[str, Any], None]):
        self._send = send

    def add(self, piece: str) -> None:
        self._send("progress", piece)


class RetryInProcess(Exception):
    """The caller compiles in process instead: the child's import failed (unsupported
    ops; in process the error carries the program that partitioning needs), or it failed
    with an exception that does not travel through pickle (in process it is raised as
    it is)."""


def _status_mb(field: str) -> float:
    """A size from /proc/self/status ("VmRSS", "VmHWM"), in MiB; 0 where there is none."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _fresh_tqdm_locks() -> None:
    """tqdm's monitor thread is not in the child, and may have held tqdm's lock at the
    fork; torch.fx makes progress bars, which take it: each tqdm class that holds a lock
    of its own gets a fresh one."""
    std = sys.modules.get("tqdm.std")
    if std is None:
        return
    lock, pending = threading.RLock(), [std.tqdm]
    while pending:
        cls = pending.pop()
        if "_lock" in vars(cls):
            cls._lock = lock
        pending.extend(cls.__subclasses__())


def _child(read_fd: int, write_fd: int, work: Callable[[Relay], Any]) -> None:
    """The forked process: runs `work`, sends its outcome, and exits without running the
    caller's exit handlers (they belong to the caller). Warnings are recorded and sent
    for the caller to issue under its own filters."""
    try:
        os.close(read_fd)
        # The caller's shutdown handlers are not this process's; Ctrl-C reaches the
        # caller too, which ends this process.
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(number, signal.SIG_DFL)
        # The caller's objects are never collected here: a finalizer among its garbage
        # cycles (a temporary directory's, say) is the caller's to run, not this copy's.
        gc.freeze()
        # What the child has resident from the start is what it shares with the caller.
        shared_mb = _status_mb("VmRSS")
        # torch's OpenMP pool does not exist here; nothing the compile runs needs threads.
        torch.set_num_threads(1)
        _fresh_tqdm_locks()
        with os.fdopen(write_fd, "wb") as pipe:
            def send(kind: str, payload: Any) -> None:
                data = pickle.dumps((kind, payload))  # whole, or nothing written
                pipe.write(data)
                pipe.flush()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    outcome = ("result", (work(Relay(send)),
                                          _status_mb("VmHWM") - shared_mb))
                except _C.ImportError:
                    outcome = ("retry", None)
                except BaseException as error:  # noqa: BLE001 (every failure goes back)
                    outcome = _portable(error, traceback.format_exc())
            seen = set()
            for w in caught:
                where = (str(w.message), w.category, w.filename, w.lineno)
                if where in seen:  # once per place, as Python's default filter shows it
                    continue
                seen.add(where)
                try:
                    send("warning", (str(w.message), w.category, w.filename, w.lineno))
                except Exception:  # noqa: BLE001 (a category defined out of reach)
                    send("warning", (str(w.message), UserWarning, w.filename, w.lineno))
            try:
                send(*outcome)
            except Exception:  # noqa: BLE001 (a result that does not pickle)
                send("retry", None)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(0)


def _portable(error: BaseException, trace: str) -> tuple[str, Any]:
    """("error", the pickled exception, its traceback in a note) when it unpickles as the
    same type and message, else ("retry", None): the caller compiles in process, where it
    is raised as it is (torch's exceptions often take other arguments than the message
    they show)."""
    try:
        data = pickle.dumps(error)
        copy = pickle.loads(data)
        if type(copy) is type(error) and str(copy) == str(error):
            if hasattr(copy, "add_note"):  # Python 3.11+
                copy.add_note("(raised in thunder's compile process, thunder/apart.py:)\n"
                              + trace.rstrip())
                data = pickle.dumps(copy)
            return "error", data
    except Exception:  # noqa: BLE001 (it does not travel)
        pass
    return "retry", None


def _describe(status: int | None) -> str:
    if status is None:
        return "ended (its status was taken by the application's own handler)"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        name = signal.Signals(number).name if number in signal.valid_signals() else number
        hint = " (out of memory?)" if number == signal.SIGKILL else ""
        return f"was killed by signal {name}{hint}"
    return f"exited with status {os.WEXITSTATUS(status)}"


def run(work: Callable[[Relay], Any], progress: Any) -> tuple[Any, float | None]:
    """`work(relay)` in a forked process: its result, and the most resident memory (MiB)
    that process had beyond the pages it started with (those it shares with this
    process). Raises what the work raised, RetryInProcess (see there), and
    thunder.CompileError when the process died without an answer."""
    read_fd, write_fd = os.pipe()
    sys.stderr.flush()
    sys.stdout.flush()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns of any fork of a process with threads; torch's OpenMP
            # workers are such threads, and the child never uses them (_child).
            warnings.filterwarnings("ignore", message=".*multi-threaded.*fork",
                                    category=DeprecationWarning)
            pid = os.fork()
    except OSError:  # no memory or no process left for a fork
        os.close(read_fd)
        os.close(write_fd)
        raise RetryInProcess() from None
    if pid == 0:
        _child(read_fd, write_fd, work)
    os.close(write_fd)
    outcome = None
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            while True:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", FutureWarning)  # torch's TreeSpec
                        kind, payload = pickle.load(pipe)
                except EOFError:
                    break
                if kind == "progress":
                    progress.add(payload)
                elif kind == "warning":
                    message, category, filename, lineno = payload
                    warnings.warn_explicit(message, category, filename, lineno)
                else:
                    outcome = (kind, payload)
    except BaseException:
        _end(pid, kill=True)  # interrupted (Ctrl-C): no compile left running
        raise
    status = _end(pid)
    if outcome is None:
        raise _C.CompileError(f"the compile process {_describe(status)} before it answered")
    kind, payload = outcome
    if kind == "result":
        return payload
    if kind == "error":
        try:
            error = pickle.loads(payload)
        except Exception:  # noqa: BLE001 (its class is not importable here)
            error = None
        if isinstance(error, BaseException):
            raise error
    raise RetryInProcess()


def _end(pid: int, kill: bool = False) -> int | None:
    """Waits for the child (killed first when `kill`): its status, or None when the
    application reaps its children itself (SIGCHLD ignored or handled)."""
    try:
        if kill:
            os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]
    except (ChildProcessError, ProcessLookupError):
        return None
