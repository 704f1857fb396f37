"""Runs TileLang's example test functions (scratch copies, imports changed to tlc) with torch
mocked: a kernel that compiles raises Compiled when first called; other exceptions are the
example's failures to compile (or the harness's)."""
import importlib, inspect, os, sys, traceback, types
from unittest import mock

sys.path.insert(0, "/tmp/tlex")
import faketorch  # noqa: F401  (sys.modules["torch"])
for sub in ["triton", "triton.language",
            "einops", "fla", "fla.ops", "fla.ops.utils", "fla.utils", "tqdm", "scipy",
            "FLA_KDA", "FLA_KDA.fla_chunk_delta", "FLA_KDA.fla_chunk_inter", "FLA_KDA.fla_chunk_intra",
            "FLA_KDA.fla_chunk_o", "FLA_KDA.fla_wy_fast", "FLA_KDA.cumsum", "test_utils_kda"]:
    sys.modules[sub] = mock.MagicMock(name=sub)
    sys.modules[sub].__file__ = "<mock>"; sys.modules[sub].__version__ = "3.6.0"
import tlc
from tlc.jit import JITKernel

class Compiled(Exception):
    pass

def _called(self, *a, **k):
    raise Compiled(self.name)
JITKernel.__call__ = _called

folder = sys.argv[1]
sys.path.insert(0, folder)
os.chdir(folder)
pattern = sys.argv[2] if len(sys.argv) > 2 else "test_"
for fname in sorted(os.listdir(folder)):
    if not fname.endswith(".py") or not fname.startswith(pattern):
        continue
    try:
        m = importlib.import_module(fname[:-3])
    except Exception as e:
        print(f"{fname}: IMPORT {type(e).__name__}: {str(e)[:300]}")
        continue
    names = ["main"] if pattern != "test_" else None
    for name, fn in inspect.getmembers(m, inspect.isfunction):
        if fn.__module__ != m.__name__:
            continue
        if names is None and not name.startswith("test") or names and name not in names:
            continue
        sys.argv = [fname]
        try:
            fn()
            print(f"{fname}::{name}: RAN (no kernel call)")
        except Compiled as c:
            print(f"{fname}::{name}: COMPILED {c}")
        except tlc.CompilationError as e:
            print(f"{fname}::{name}: FAIL {str(e).splitlines()[0][:300]}")
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)
            where = next((f"{os.path.basename(t.filename)}:{t.lineno}" for t in reversed(tb)
                          if "/tlc/" in t.filename), None)
            print(f"{fname}::{name}: ERROR {type(e).__name__}: {str(e)[:250]} [{where}]")
