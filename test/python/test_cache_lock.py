"""Processes that need the same kernel compile it once: KEY.lock beside the
disk-cache entry (tlc/cache.py, `compiling`); the others wait and load the
entry; a lock whose process was killed is taken over."""

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest

from tlc import cache

sys.path.insert(0, os.path.dirname(__file__))
import cache_lock_worker  # noqa: E402


_STARTED = []  # killed after each test, so that a failure never leaves one hanging


@pytest.fixture(autouse=True)
def _kill_workers():
    yield
    while _STARTED:
        p = _STARTED.pop()
        if p.is_alive():
            p.kill()
        p.join(10)


def _processes(ctx, tmp_path, indices, start, **kwargs):
    procs = []
    for i in indices:
        p = ctx.Process(target=cache_lock_worker.run, args=(
            str(tmp_path / "cache"), str(tmp_path / "count"), str(tmp_path / f"ptx{i}"), start),
            kwargs=kwargs, daemon=True)
        p.start()
        _STARTED.append(p)
        procs.append(p)
    return procs


def _join(procs, timeout=120):
    for p in procs:
        p.join(timeout)
        assert p.exitcode == 0, f"worker exited with {p.exitcode}"


def _compiles(tmp_path) -> list[str]:
    path = tmp_path / "count"
    return path.read_text().split() if path.exists() else []


def test_processes_compile_a_kernel_once(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = _processes(ctx, tmp_path, range(3), start, compile_seconds=1.0)
    start.set()
    _join(procs)
    assert len(_compiles(tmp_path)) == 1
    ptx = {(tmp_path / f"ptx{i}").read_text() for i in range(3)}
    assert len(ptx) == 1 and ".entry dbl(" in ptx.pop()
    left = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert len(left) == 1 and left[0].endswith(".json")  # no lock or temporary file left


def test_lock_of_a_killed_process_is_taken_over(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    start.set()
    holder, = _processes(ctx, tmp_path, [0], start, hang=True)
    deadline = time.monotonic() + 60
    while not _compiles(tmp_path):  # the holder has the lock and is compiling
        assert time.monotonic() < deadline and holder.is_alive()
        time.sleep(0.05)
    locks = list((tmp_path / "cache").glob("*.lock"))
    assert len(locks) == 1 and locks[0].read_text().split()[0] == str(holder.pid)
    os.rename(tmp_path / "count", tmp_path / "count.holder")
    waiters = _processes(ctx, tmp_path, [1, 2], start)
    time.sleep(1.5)  # they wait on the live holder's lock
    assert all(p.is_alive() for p in waiters) and not _compiles(tmp_path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join(10)
    _join(waiters)
    assert len(_compiles(tmp_path)) == 1  # one of them took the lock over
    assert (tmp_path / "ptx1").read_text() == (tmp_path / "ptx2").read_text()
    assert not list((tmp_path / "cache").glob("*.lock*"))


def test_stale_locks(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path))
    lock = tmp_path / "k.lock"
    lock.write_text(f"{os.getpid()} {os.uname().nodename} t")
    assert not cache._is_stale(str(lock))  # this process: alive
    lock.write_text(f"{os.getpid()} another-host t")
    assert not cache._is_stale(str(lock))  # unknown: only its age counts
    old = time.time() - cache.LOCK_STALE_SECONDS - 1
    os.utime(lock, (old, old))
    assert cache._is_stale(str(lock))
    lock.write_text("")  # killed before writing it: stale after a few seconds
    assert not cache._is_stale(str(lock))
    old = time.time() - cache.EMPTY_LOCK_SECONDS - 1
    os.utime(lock, (old, old))
    assert cache._is_stale(str(lock))
    assert not cache._is_stale(str(lock), seen="something else")  # replaced meanwhile


def test_a_zombie_holds_no_lock(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while cache._is_alive(child.pid):  # exits, and is not reaped until wait()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert os.path.exists(f"/proc/{child.pid}")  # a zombie, not gone
    child.wait()
    assert cache._is_alive(os.getpid())


def test_waiting_times_out(tmp_path, monkeypatch):
    """A live holder that never finishes: the waiter compiles itself."""
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "LOCK_WAIT_SECONDS", 0.3)
    (tmp_path / "k.lock").write_text(f"{os.getpid()} {os.uname().nodename} other")
    t = time.monotonic()
    with cache.compiling("k") as stored:
        assert stored is None
    assert 0.3 <= time.monotonic() - t < 5
    assert (tmp_path / "k.lock").exists()  # not ours: left alone


def test_stale_lock_that_cannot_be_removed(tmp_path, monkeypatch):
    """Another user's dead lock in a shared folder: wait until the deadline, no spinning."""
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "LOCK_WAIT_SECONDS", 0.3)
    (tmp_path / "k.lock").write_text("")
    old = time.time() - cache.EMPTY_LOCK_SECONDS - 1
    os.utime(tmp_path / "k.lock", (old, old))
    real_unlink, calls = os.unlink, []

    def forbidden(path, *a, **k):
        if str(path).endswith("k.lock"):
            calls.append(path)
            raise PermissionError(1, "Operation not permitted", path)
        return real_unlink(path, *a, **k)

    monkeypatch.setattr(os, "unlink", forbidden)
    with cache.compiling("k") as stored:
        assert stored is None
    assert 0 < len(calls) < 100
    assert not (tmp_path / "k.lock.break").exists()


def test_taking_over_a_dead_lock(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "k.lock").write_text(f"{dead.pid} {os.uname().nodename} t")
    t = time.monotonic()
    with cache.compiling("k") as stored:
        assert stored is None
        assert (tmp_path / "k.lock").read_text().split()[0] == str(os.getpid())
    assert time.monotonic() - t < 2
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_entry_stored_while_waiting_is_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path))
    (tmp_path / "k.lock").write_text(f"{os.getpid()} {os.uname().nodename} other")
    cache.store("k", {"name": "k"}, {"tile": "t"})
    with cache.compiling("k") as stored:
        assert stored == ({"name": "k"}, {"tile": "t"})


def test_lock_is_released(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "c"))
    with cache.compiling("k") as stored:
        assert stored is None
        assert (tmp_path / "c" / "k.lock").read_text().split()[0] == str(os.getpid())
    assert not (tmp_path / "c" / "k.lock").exists()


def test_unwritable_cache_compiles_without_a_lock(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "c"))
    real_open = os.open

    def read_only(path, flags, *args):
        if flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    t = time.monotonic()
    with cache.compiling("k") as stored:
        assert stored is None
    assert time.monotonic() - t < 1


KILLED_WRITER = """
import os, sys, time
os.environ["TLC_CACHE_DIR"] = sys.argv[1]
from tlc import cache
real_write = os.write

def stalled(fd, data):  # writes a little of the entry, then waits to be killed
    real_write(fd, bytes(data[:10]))
    open(sys.argv[2], "w").close()
    time.sleep(600)

os.write = stalled
cache.store("ab" * 32, {"name": "new", "ptx": "y" * 100000}, {})
"""


def test_process_killed_mid_write_damages_nothing(tmp_path, monkeypatch):
    from tlc import cache_files

    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "c"))
    cache.store("ab" * 32, {"name": "old"}, {})
    child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(tmp_path / "c"),
                              str(tmp_path / "ready")])
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "ready").exists():
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.05)
    finally:
        child.kill()
        child.wait()
    assert cache.load("ab" * 32) == ({"name": "old"}, {})  # the old entry, whole
    (tmp, ) = (tmp_path / "c").glob(".tlc-*.tmp")  # the killed write's partial file
    assert cache_files.clear(str(tmp_path / "c"))[0] == 1  # too young to be a leftover
    assert tmp.exists()
    old = time.time() - cache_files.LEFTOVER_AGE_SECONDS - 1
    os.utime(tmp, (old, old))
    assert cache_files.clear(str(tmp_path / "c"))[0] == 1
    assert list((tmp_path / "c").iterdir()) == []
