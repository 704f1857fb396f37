"""The best configuration of each tuning, kept on disk beside the kernel cache.

Keyed by the factory's source, the arguments, the candidate list, the target
and the compiler; the entry stores the winner's index in the candidate list
and its repr, so a stale entry (the list changed under the same key) is
noticed and re-tuned rather than trusted.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import tempfile

from ..version import __version__


def tuning_key(fn, args, kwargs, configs: list, target: str, extra: dict) -> str:
    """Keyed like the kernel cache (cache_key.factory_key: every value the
    factory reads) where that key can be computed; else by its source and the
    arguments' reprs (a stale winner then costs speed, never correctness: the
    winner's kernel is compiled and cached under its own sound key)."""
    from ..cache_key import compiler_identity, factory_key

    program = factory_key(fn, tuple(args), dict(kwargs), target)
    if program is None:
        try:
            source = inspect.getsource(fn)
        except (OSError, TypeError):
            source = getattr(fn, "__qualname__", repr(fn))
        program = json.dumps({"source": source, "module": getattr(fn, "__module__", None),
                              "args": repr(args), "kwargs": repr(sorted(kwargs.items()))})
    blob = json.dumps({"program": program,
                       "configs": [repr(sorted(c.items())) for c in configs],
                       "target": target, "extra": repr(sorted(extra.items())),
                       "compiler": compiler_identity()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _path(key: str) -> str:
    from ..cache import cache_dir

    return os.path.join(cache_dir(), "autotune", key + ".json")


def load_best(key: str, configs: list):
    """(index, latency ms) of the stored winner, or None (missing, damaged, stale)."""
    try:
        with open(_path(key)) as f:
            entry = json.load(f)
        index = entry["index"]
        if entry.get("tlc") != __version__ or not isinstance(index, int) \
                or not 0 <= index < len(configs) \
                or entry["config"] != repr(sorted(configs[index].items())):
            return None
        return index, float(entry["latency"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def store_best(key: str, configs: list, index: int, latency: float) -> None:
    path = _path(key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump({"tlc": __version__, "index": index, "latency": latency,
                       "config": repr(sorted(configs[index].items()))}, f)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full disk only costs a re-tune
