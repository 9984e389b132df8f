"""The on-disk cache of compiled models behind thunder.compile.

Layout under the cache directory (``$THUNDER_CACHE_DIR``, else ``$XDG_CACHE_HOME/thunder``,
else ``~/.cache/thunder``)::

    entries/<key>/        one compiled model: libNAME.so, NAME.h, [NAME.safetensors],
                          entry.json (what it was compiled from; written last)
    entries/<key> -> <key2>
                          a second key of an entry (Cache.alias): thunder.compile's key
                          without the weights' bytes, for a library that reads every
                          weight in place
    kernels/<2 hex>/<sha256>.o
                          compiled kernel objects (and precompiled headers, .gch) by
                          content, shared by all entries and models
    tmp/<key>.<tag>.<host>.<pid>.<random>/
                          a compile in progress (tag "build"; the driver builds inside
                          it), an entry being deleted ("broken", "cleared"), or an
                          alias being made ("alias", a symbolic link)
    locks/<key>.lock      held (flock) by the process compiling <key>

The key is a sha256 over everything the artifact depends on (see ``key``). An entry is
published by renaming its complete temporary directory to ``entries/<key>`` (one atomic
rename on one file system), so a reader sees a whole entry or none: a compile that is
killed leaves only its temporary directory, which is never read and is removed by a later
compile once its process is gone. When two processes compile the same key, the second
waits on the lock and then uses the first one's entry; without working locks (some network
file systems) both compile, the first rename wins and the loser uses the winner's entry.
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import pathlib
import platform
import secrets
import shutil
import socket
import time
from typing import Any, Callable

__all__ = ["Cache", "default_cache_dir", "program_digest", "weights_digest"]

#: Bumped when the layout of entries or the composition of keys changes.
CACHE_FORMAT = 1

#: Temporary directories of processes on other hosts (shared cache directories), whose
#: liveness cannot be checked, are removed after this long.
_FOREIGN_TMP_AGE_S = 24 * 3600


def default_cache_dir() -> pathlib.Path:
    """$THUNDER_CACHE_DIR, else $XDG_CACHE_HOME/thunder, else ~/.cache/thunder."""
    if os.environ.get("THUNDER_CACHE_DIR"):
        return pathlib.Path(os.environ["THUNDER_CACHE_DIR"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return pathlib.Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "thunder"
    return pathlib.Path.home() / ".cache" / "thunder"


# ---------------------------------------------------------------------------------------
# What the key is made of
# ---------------------------------------------------------------------------------------

def _strip_volatile(value: Any) -> Any:
    """The program JSON without what changes between two exports of the same program:
    node provenance (``from_node`` holds Python object ids) and the example's values of
    symbolic sizes (``hint``), which the compiled code does not depend on (one artifact
    serves every size in a dynamic dim's range)."""
    if isinstance(value, dict):
        return {k: _strip_volatile(v) for k, v in value.items()
                if k not in ("from_node", "hint")}
    if isinstance(value, list):
        return [_strip_volatile(v) for v in value]
    return value


def program_digest(program_json: bytes) -> str:
    """sha256 of an ExportedProgram's serialized JSON, stable across processes."""
    canonical = json.dumps(_strip_volatile(json.loads(program_json)), sort_keys=True,
                           separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _tensor_digest(address: int, nbytes: int) -> bytes:
    # SHA-256: OpenSSL's runs on the CPU's SHA extensions, 2x blake2b's speed here (531
    # against 265 MB/s per thread on the Intel VM; GPT-2's weights are 500 MB).
    digest = hashlib.sha256()
    if nbytes:
        # A view of the tensor's own memory: nothing is copied; hashlib releases the GIL
        # on large buffers, so tensors hash in parallel.
        digest.update(memoryview((ctypes.c_char * nbytes).from_address(address)))
    return digest.digest()


def provided_digest(provided: dict) -> str:
    """A short digest of the weights a library reads from the caller and does not embed
    (runtime.offered_weights: name -> (dtype name, shape)), for a cache key's options."""
    return hashlib.sha256(repr(sorted(provided.items())).encode()).hexdigest()[:16]


def weights_digest(views: dict) -> str:
    """A digest of the weights' names, dtypes, shapes and bytes; views as
    capture.weight_views gives them (name -> (data_ptr, nbytes, dtype, sizes))."""
    names = sorted(views)
    total = sum(views[name][1] for name in names)
    if total > (64 << 20) and (os.cpu_count() or 1) > 1:
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
            digests = list(pool.map(lambda n: _tensor_digest(views[n][0], views[n][1]),
                                    names))
    else:
        digests = [_tensor_digest(views[n][0], views[n][1]) for n in names]
    combined = hashlib.blake2b(digest_size=32)
    for name, digest in zip(names, digests):
        _, nbytes, dtype, sizes = views[name]
        combined.update(json.dumps([name, dtype, list(sizes), nbytes]).encode())
        combined.update(digest)
    return combined.hexdigest()


def host_cpu_digest() -> str:
    """What -march=native compiles for: the CPU model and feature flags (a cache directory
    shared between machines must not hand one machine another's native code)."""
    identity = platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "flags", "Features", "CPU part")):
                    identity += line
                if not line.strip():
                    break  # the first processor's block is enough
    except OSError:
        identity += platform.processor()
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def key(parts: dict) -> str:
    """The cache key of a compile: sha256 of the JSON of `parts` (program digest, input
    signature, target and options, weights digest, versions)."""
    document = json.dumps({"format": CACHE_FORMAT, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(document.encode()).hexdigest()


# ---------------------------------------------------------------------------------------
# The directory
# ---------------------------------------------------------------------------------------

def _fsync_tree(directory: pathlib.Path) -> None:
    """fsync every file under directory (an entry's artifacts, before it is published)."""
    for path in directory.rglob("*"):
        if path.is_file() and not path.is_symlink():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _tmp_name(key: str, tag: str) -> str:
    """A directory name under tmp/ that says who made it, so that clean_stale can tell
    whether its process is still alive."""
    return f"{key}.{tag}.{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(4)}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    # A zombie is a process that is gone (one whose parent died is reaped by init, which
    # a container's first process may never do): the third field of its stat is "Z".
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class Cache:
    """The cache directory: lookups, locked and atomic publication, cleanup."""

    ENTRY_FILE = "entry.json"

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = pathlib.Path(root).expanduser() if root else default_cache_dir()
        self.root = self.root.resolve()
        self.entries = self.root / "entries"
        self.tmp = self.root / "tmp"
        self.locks = self.root / "locks"
        #: Compiled kernel objects by content, shared by every entry (the C++ driver
        #: reads and writes it: kernels/<2 hex>/<sha256>.o, each published whole by
        #: link(2) or rename, so a killed compile leaves no partial object).
        self.kernels = self.root / "kernels"

    def entry_dir(self, key: str) -> pathlib.Path:
        return self.entries / key

    def lookup(self, key: str) -> pathlib.Path | None:
        """The entry of `key` if it is published (complete), else None; through an
        alias, the entry it names."""
        entry = self.entry_dir(key)
        if not (entry / self.ENTRY_FILE).is_file():
            return None
        return entry.resolve() if entry.is_symlink() else entry

    def alias(self, alias: str, key: str) -> None:
        """Makes `alias` a second key of the entry of `key`: entries/<alias>, a symbolic
        link to it, made whole (a link renamed into place, replacing an older alias);
        lookup(alias) then finds the entry while it is published."""
        link = self.entry_dir(alias)
        self.tmp.mkdir(parents=True, exist_ok=True)
        tmp = self.tmp / _tmp_name(alias, "alias")
        os.symlink(key, tmp)
        try:
            os.replace(tmp, link)
        except OSError:
            tmp.unlink(missing_ok=True)  # a directory of that name: leave it

    def discard(self, key: str) -> None:
        """Moves a broken entry (one that does not load) out of the way; a later compile
        of the key publishes a fresh one. Discarding an alias discards its entry too."""
        entry = self.entry_dir(key)
        if entry.is_symlink():
            try:
                target = os.readlink(entry)
            except FileNotFoundError:
                return  # another process removed it
            entry.unlink(missing_ok=True)
            self.discard(os.path.basename(target))
            return
        self.tmp.mkdir(parents=True, exist_ok=True)
        graveyard = self.tmp / _tmp_name(key, "broken")
        try:
            os.rename(entry, graveyard)
        except FileNotFoundError:
            return  # someone else moved it
        shutil.rmtree(graveyard, ignore_errors=True)

    def publish(self, key: str, build: Callable[[pathlib.Path], dict],
                on_wait: Callable[[], None] | None = None) -> tuple[pathlib.Path, bool]:
        """The entry of `key`, built by ``build(tmp_dir)`` unless another process builds
        or has built it. Returns (entry, built_here).

        build writes the artifacts into tmp_dir and returns what entry.json records.
        on_wait is called when another process holds the key's lock (it is compiling).
        """
        for directory in (self.entries, self.tmp, self.locks):
            directory.mkdir(parents=True, exist_ok=True)
        with open(self.locks / f"{key}.lock", "a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait()
                fcntl.flock(lock, fcntl.LOCK_EX)
            except OSError:
                pass  # no locks on this file system: the rename below still decides
            entry = self.lookup(key)
            if entry is not None:
                return entry, False  # the process we waited for published it
            self.clean_stale()
            tmp = self.tmp / _tmp_name(key, "build")
            tmp.mkdir()
            try:
                record = build(tmp)
                # The artifacts reach the disk before entry.json says they are whole;
                # this also leaves the library's pages clean, so a kernel that keeps
                # its own copy of a weight can hand the file-backed one back
                # (thunder_cpu::release_weight_pages) in this very process.
                _fsync_tree(tmp)
                # Written last: a directory with entry.json is complete.
                with open(tmp / self.ENTRY_FILE, "w") as f:
                    json.dump(record, f, indent=1, sort_keys=True, default=str)
                    f.flush()
                    os.fsync(f.fileno())
                try:
                    os.rename(tmp, self.entry_dir(key))
                except OSError as error:
                    if error.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                        raise
                    # Another process published the key first: use its entry.
                    shutil.rmtree(tmp, ignore_errors=True)
                    return self.entry_dir(key), False
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            return self.entry_dir(key), True

    def clean_stale(self) -> list[str]:
        """Removes the temporary directories of compiles whose process is gone (killed or
        crashed), and those of other hosts older than a day. Returns their names."""
        removed = []
        try:
            children = list(self.tmp.iterdir())
        except FileNotFoundError:
            return removed
        host = socket.gethostname()
        for child in children:
            # <key>.<tag>.<host>.<pid>.<random>; a host name may contain dots.
            parts = child.name.split(".")
            if len(parts) < 5:
                continue
            child_host, pid = ".".join(parts[2:-2]), parts[-2]
            try:
                pid = int(pid)
            except ValueError:
                continue
            if child_host == host:
                stale = not _pid_alive(pid)
            else:
                try:
                    stale = time.time() - child.lstat().st_mtime > _FOREIGN_TMP_AGE_S
                except FileNotFoundError:
                    continue
            if stale:
                if child.is_symlink():
                    child.unlink(missing_ok=True)  # an alias not yet renamed into place
                else:
                    shutil.rmtree(child, ignore_errors=True)
                removed.append(child.name)
        # A kernel object copied into the cache (another file system than the build's)
        # by a process that died before its rename: <sha256>.o.tmp.<pid>.
        for partial in self.kernels.glob("*/*.tmp.*"):
            try:
                pid = int(partial.name.rsplit(".", 1)[1])
            except ValueError:
                continue
            if not _pid_alive(pid):
                partial.unlink(missing_ok=True)
                removed.append(partial.name)
        return removed

    def clear(self) -> None:
        """Removes every entry and the kernel objects (not the compiles in progress)."""
        for directory in (self.entries, self.kernels):
            if directory.exists():
                graveyard = self.tmp / _tmp_name(directory.name, "cleared")
                self.tmp.mkdir(parents=True, exist_ok=True)
                os.rename(directory, graveyard)
                shutil.rmtree(graveyard, ignore_errors=True)
