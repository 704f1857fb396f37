"""The disk cache's files: an entry that is not a regular file, or is
damaged past json's limits, is a miss (no hang, no RecursionError); a failed
write leaves no temporary file; entries get the umask's mode."""

import errno
import json
import os
import threading

import pytest

from tlc import cache


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "c"))
    return tmp_path / "c"


ARTIFACT = {"name": "k", "ptx": "x"}


def test_store_and_load(folder):
    cache.store("abc", ARTIFACT, {"tile": "t"})
    assert cache.load("abc") == (ARTIFACT, {"tile": "t"})
    assert [p.name for p in folder.iterdir()] == ["abc.json"]


def test_fifo_entry_is_skipped_not_waited_for(folder):
    folder.mkdir()
    os.mkfifo(folder / "abc.json")
    result = []
    reader = threading.Thread(target=lambda: result.append(cache.load("abc")), daemon=True)
    reader.start()
    reader.join(5)
    assert not reader.is_alive(), "loading a FIFO cache entry hangs"
    assert result == [None]
    cache.store("abc", ARTIFACT, {})  # and a store replaces it
    assert cache.load("abc") == (ARTIFACT, {})


def test_directory_and_symlink_entries_are_misses(folder, tmp_path):
    (folder / "d.json").mkdir(parents=True)
    assert cache.load("d") is None
    cache.store("d", ARTIFACT, {})  # cannot replace a directory: ignored
    (tmp_path / "real.json").write_text(json.dumps({"tlc": "0.1.0", "artifact": ARTIFACT,
                                                    "stages": {}}))
    os.symlink(tmp_path / "real.json", folder / "s.json")
    assert cache.load("s") is None
    assert not [p for p in folder.iterdir() if p.name.startswith(".tlc-")]


def test_deeply_nested_entry_is_a_miss(folder):
    folder.mkdir()
    (folder / "abc.json").write_text("[" * 100000 + "]" * 100000)
    assert cache.load("abc") is None
    (folder / "abc.json").write_text('{"tlc": "0.1.0", "artifact": ' + "[" * 100000)
    assert cache.load("abc") is None


def test_full_disk_leaves_no_temporary_file(folder, monkeypatch):
    folder.mkdir()
    real_write = os.write

    def full(fd, data):
        if fd > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    cache.store("abc", ARTIFACT, {})  # no exception: a miss later
    monkeypatch.undo()
    assert list(folder.iterdir()) == []


def test_unserialisable_entry_leaves_nothing(folder):
    cache.store("abc", {"x": object()}, {})
    assert not folder.exists() or list(folder.iterdir()) == []


def test_entry_mode_follows_umask(folder):
    old = os.umask(0o027)
    try:
        cache.store("abc", ARTIFACT, {})
    finally:
        os.umask(old)
    assert (folder / "abc.json").stat().st_mode & 0o777 == 0o640
