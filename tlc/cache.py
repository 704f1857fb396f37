"""The disk cache of compiled kernels: one JSON file per key (see cache_key.py).

An entry that cannot be read as it should (missing, damaged, too deeply
nested, a FIFO, a symbolic link or anything but a regular file, written by another tlc) is a
miss: the kernel is compiled again and the entry replaced. Writing never
fails a compilation and never leaves a temporary file behind. A hit marks
the entry used (its mtime); TLC_CACHE_MAX_BYTES bounds the folder (see
cache_files.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import time

from .version import __version__
from .output import open_regular, replace_atomically, umask

MAX_ENTRY_BYTES = 256 << 20  # a bigger "entry" is not one of ours


def cache_dir() -> str:
    """TLC_CACHE_DIR, or ~/.cache/tlc."""
    return os.environ.get("TLC_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tlc")


def entry_path(key: str) -> str:
    return os.path.join(cache_dir(), key + ".json")


def load(key: str) -> tuple[dict, dict] | None:
    """(artifact, stages) stored under `key`, or None on any miss."""
    try:
        with open_regular(entry_path(key), "cache entry", follow_symlinks=False) as f:
            data = f.read(MAX_ENTRY_BYTES + 1)
            _touch(f.fileno())
        if len(data) > MAX_ENTRY_BYTES:
            return None
        entry = json.loads(data.decode("utf-8"))
        if not isinstance(entry, dict) or entry.get("tlc") != __version__:
            return None
        artifact, stages = entry["artifact"], entry["stages"]
        if not isinstance(artifact, dict) or not isinstance(stages, dict):
            return None
        return artifact, stages
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None  # recompile and replace


def store(key: str, artifact: dict, stages: dict) -> None:
    """Stores an entry atomically; a read-only or full disk only costs recompilation.
    Then, under TLC_CACHE_MAX_BYTES (malformed: a CompilationError), evicts the
    least recently used other entries."""
    from . import cache_files

    folder = cache_dir()
    limit = cache_files.max_bytes()  # a malformed TLC_CACHE_MAX_BYTES is said, not ignored
    try:
        text = json.dumps({"tlc": __version__, "artifact": artifact, "stages": stages})
        os.makedirs(folder, exist_ok=True)
        replace_atomically(entry_path(key), text.encode("utf-8"), mode=0o666 & ~umask())
    except (OSError, ValueError, TypeError, RecursionError):
        return
    if limit is not None:
        cache_files.evict(folder, limit, keep=entry_path(key))


def _touch(fd: int) -> None:
    """Marks an entry used now (least-recently-used eviction reads its mtime)."""
    try:
        os.utime(fd)
    except OSError:
        pass  # a read-only cache: still a hit


# -- one compilation per key across processes --------------------------------
#
# KEY.lock beside the entry, created with O_CREAT|O_EXCL, says "pid host token"
# of the process compiling KEY. The others wait for the entry, polling, and
# load it; when the lock goes away without an entry they try to take it. A
# lock whose process is dead (same host), that is empty for a while (killed
# between creating and writing it) or older than LOCK_STALE_SECONDS is taken
# over: under KEY.lock.break (also O_EXCL) a waiter checks that the lock is
# still the one it judged and removes it, so that two waiters never remove
# each other's fresh locks. After LOCK_WAIT_SECONDS a waiter compiles itself.

LOCK_WAIT_SECONDS = 300.0
LOCK_STALE_SECONDS = 600.0
EMPTY_LOCK_SECONDS = 5.0  # a lock still empty after this was never written
_POLL_SECONDS = (0.01, 0.25)  # first and longest pause between looks


def lock_path(key: str) -> str:
    return os.path.join(cache_dir(), key + ".lock")


@contextlib.contextmanager
def compiling(key: str):
    """Around the compilation of `key`: yields (artifact, stages) when another
    process stored the entry meanwhile (use it), else None (compile and store;
    the lock, when this process got it, is held until the block ends)."""
    path = lock_path(key)
    token = f"{os.getpid()} {_host()} {os.urandom(16).hex()}"
    held = _wait_for_lock(key, path, token)
    if isinstance(held, tuple):
        yield held  # another process compiled it
        return
    try:
        yield load(key) if held else None  # stored before this process got the lock?
    finally:
        if held:
            _release(path, token)


def _wait_for_lock(key: str, path: str, token: str):
    """True once this process holds the lock; the entry when another process
    stored it; False when waiting timed out or the folder cannot hold a lock."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    pause = _POLL_SECONDS[0]
    while True:
        try:
            os.makedirs(cache_dir(), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(
                os, "O_CLOEXEC", 0), 0o666 & ~umask())
        except FileExistsError:
            pass
        except OSError:
            return False  # a read-only cache: compile without it
        else:
            try:
                os.write(fd, token.encode())
            finally:
                os.close(fd)
            return True
        entry = load(key)
        if entry is not None:
            return entry
        stale = _is_stale(path)
        if stale:  # then try again soon (a lock that cannot be removed: until the deadline)
            _take_over(path)
        if time.monotonic() > deadline:
            return False
        time.sleep(_POLL_SECONDS[0] if stale else pause)
        pause = min(pause * 2, _POLL_SECONDS[1])


def _read_lock(path: str) -> tuple[str, float] | None:
    """(text, age in seconds) of a lock file, or None when it is gone."""
    try:
        with open(path, "rb") as f:
            text = f.read(4096).decode("utf-8", "replace")
            age = time.time() - os.fstat(f.fileno()).st_mtime
        return text, age
    except OSError:
        return None


def _is_stale(path: str, seen: str | None = None) -> bool:
    """Whether the lock at `path` (if `seen` is given: still with that text)
    belongs to no live compilation."""
    lock = _read_lock(path)
    if lock is None or (seen is not None and lock[0] != seen):
        return False
    text, age = lock
    if age > LOCK_STALE_SECONDS:
        return True
    parts = text.split()
    if len(parts) != 3 or not parts[0].isdigit():
        return age > EMPTY_LOCK_SECONDS
    if parts[1] != _host():
        return False  # another machine's process: only its age tells
    return not _is_alive(int(parts[0]))


def _is_alive(pid: int) -> bool:
    """Whether process `pid` of this machine runs (a zombie, killed and not yet
    reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's, or not a pid at all: only the lock's age tells
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _take_over(path: str) -> None:
    """Removes a stale lock, unless another waiter replaced it meanwhile."""
    lock = _read_lock(path)
    if lock is None:
        return
    breaker = path + ".break"
    try:
        os.close(os.open(breaker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 & ~umask()))
    except FileExistsError:
        broken = _read_lock(breaker)
        if broken is not None and broken[1] > EMPTY_LOCK_SECONDS:
            _unlink(breaker)  # its owner died in the few lines below
        time.sleep(_POLL_SECONDS[0])
        return
    except OSError:
        return
    try:
        if _is_stale(path, seen=lock[0]):
            _unlink(path)
    finally:
        _unlink(breaker)


def _host() -> str:
    return os.uname().nodename


def _release(path: str, token: str) -> None:
    """Removes the lock if it is still this process's."""
    lock = _read_lock(path)
    if lock is not None and lock[0] == token:
        _unlink(path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
