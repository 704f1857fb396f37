"""`tlc cache --info/--clear` and TLC_CACHE_MAX_BYTES's least-recently-used
eviction (tlc/cache_files.py)."""

import os

import pytest

from tlc import cache, cache_files
from tlc.cli import main
from tlc.errors import CompilationError


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("TLC_CACHE_MAX_BYTES", raising=False)
    return tmp_path / "c"


def key(i: int) -> str:
    return f"{i:064x}"


def put(i: int, size: int = 1000, age: float = 0.0):
    """Stores entry i with about `size` bytes of PTX, last used `age` seconds ago."""
    cache.store(key(i), {"name": "k", "ptx": "x" * size}, {})
    path = cache.entry_path(key(i))
    t = os.stat(path).st_mtime - age
    os.utime(path, (t, t))
    return path


def test_info_counts_kernels_and_autotune_winners(folder, capsys):
    assert main(["cache", "--info"]) == 0
    out = capsys.readouterr().out
    assert f"cache folder: {folder} (does not exist yet)" in out
    assert "kernels: 0 entries" in out
    put(1)
    put(2)
    (folder / "autotune").mkdir()
    (folder / "autotune" / (key(3) + ".json")).write_text("{}")
    (folder / "notes.txt").write_text("not ours")
    assert main(["cache", "--info"]) == 0
    out = capsys.readouterr().out
    size = sum(os.path.getsize(cache.entry_path(key(i))) for i in (1, 2))
    assert f"kernels: 2 entries, {cache_files.human(size)}" in out
    assert "autotuning winners: 1 entries, 2 bytes" in out
    assert "total: 3 entries" in out
    assert "size limit (TLC_CACHE_MAX_BYTES): none" in out


def test_clear_removes_entries_and_winners_only(folder, capsys):
    put(1)
    (folder / "autotune").mkdir()
    (folder / "autotune" / (key(3) + ".json")).write_text("{}")
    (folder / "notes.txt").write_text("not ours")
    assert main(["cache", "--clear"]) == 0
    assert "removed 2 files" in capsys.readouterr().out
    assert sorted(p.name for p in folder.rglob("*")) == ["autotune", "notes.txt"]
    assert cache.load(key(1)) is None


def test_usage_errors(folder, capsys):
    with pytest.raises(SystemExit) as e:
        main(["cache"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["cache", "--info", "--clear"])
    assert e.value.code == 2


def test_malformed_limit_is_an_error(folder, monkeypatch, capsys):
    monkeypatch.setenv("TLC_CACHE_MAX_BYTES", "lots")
    assert main(["cache", "--info"]) == 1
    assert "TLC_CACHE_MAX_BYTES='lots' is not a size" in capsys.readouterr().err
    with pytest.raises(CompilationError, match="TLC_CACHE_MAX_BYTES"):
        cache.store(key(1), {"name": "k"}, {})


@pytest.mark.parametrize("text,value", [("1000", 1000), ("2K", 2048), ("3m", 3 << 20),
                                        ("1GiB", 1 << 30), ("", None)])
def test_limit_syntax(monkeypatch, text, value):
    monkeypatch.setenv("TLC_CACHE_MAX_BYTES", text)
    assert cache_files.max_bytes() == value


def test_store_evicts_least_recently_used(folder, monkeypatch):
    put(1, age=30)
    put(2, age=20)
    put(3, age=10)
    entry = os.path.getsize(cache.entry_path(key(1)))
    assert cache.load(key(1)) is not None  # a hit makes entry 1 the most recently used
    monkeypatch.setenv("TLC_CACHE_MAX_BYTES", str(3 * entry))
    put(4)  # four entries do not fit in three: the least recently used (2) goes
    assert [cache.load(key(i)) is not None for i in (1, 2, 3, 4)] == [True, False, True, True]
    monkeypatch.setenv("TLC_CACHE_MAX_BYTES", str(entry * 3 // 2))
    put(5)
    left = sorted(p.name for p in folder.iterdir())
    assert left == [key(5) + ".json"]


def test_entry_bigger_than_the_limit_is_kept(folder, monkeypatch):
    put(1)
    monkeypatch.setenv("TLC_CACHE_MAX_BYTES", "10")
    put(2)
    assert cache.load(key(2)) is not None
    assert cache.load(key(1)) is None


def test_eviction_survives_concurrent_deletion(folder, monkeypatch):
    for i in range(4):
        put(i, age=10 - i)
    real_unlink = os.unlink

    def racing(path, *a, **k):  # another process removed the file first
        real_unlink(path, *a, **k)
        raise FileNotFoundError(path)

    monkeypatch.setattr(os, "unlink", racing)
    cache_files.evict(str(folder), 1, keep=cache.entry_path(key(3)))
    monkeypatch.undo()
    assert sorted(p.name for p in folder.iterdir()) == [key(3) + ".json"]


def test_tlc_help_names_the_cache_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "tlc cache --info" in " ".join(capsys.readouterr().out.split())
