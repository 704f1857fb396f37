# TileLang examples/hadamard_transform/example_hadamard.py, scratch copy /tmp/had/had_ex.py (imports changed to tlc;
# its code is not in this repository): compiled by tlc for sm_90a at n = 8 to 32768 (batch 64), then
# run in the interpreter at n = 8 to 4096 against x @ H (Sylvester Hadamard matrix) in float64.
import sys, types; sys.path.insert(0, "/tmp/had"); sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub  # noqa
sys.modules.setdefault("scipy", types.ModuleType("scipy"))
tnn = types.ModuleType("torch.nn"); tnn.functional = types.ModuleType("torch.nn.functional")
sys.modules["torch.nn"] = tnn; sys.modules["torch.nn.functional"] = tnn.functional
import numpy as np, tlc, tlc.language as T
try:
    import had_ex as ex
except Exception as e:
    print("IMPORT FAIL", type(e).__name__, str(e)[:600]); raise SystemExit
for n in [8, 256, 1024, 32768]:
    try:
        k = ex.hadamard.compile(b=64, n=n, dtype=T.float32)
        print(n, "OK", len(k.get_kernel_source()))
    except Exception as e:
        print(n, "FAIL", type(e).__name__, str(e)[:700])

def hadamard_matrix(n):
    h = np.array([[1.0]])
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h

import time
for n in [8, 256, 1024, 4096]:
    x = np.random.default_rng(n).standard_normal((3, n)).astype(np.float32)
    k = ex.hadamard.compile(b=3, n=n, dtype=T.float32)
    y = np.zeros_like(x)
    t = time.time()
    tlc.interpret(k.get_mlir("optimized"), x, y)
    ref = x.astype(np.float64) @ hadamard_matrix(n)
    print(n, "interpreter max |err| / max |ref|", float(np.abs(y - ref).max() / np.abs(ref).max()), f"{time.time()-t:.1f}s", flush=True)
