"""TileLang's examples/deepseek_mhc/example_mhc_pre.py, mhc_pre_gemm_sqrsum_tilelang (scratch
copy /tmp/fab, imports changed to tlc; its code is not in this repository): a tf32 gemm with A
from registers (x_frag, T.tfloat32) and a sum of squares read in 4-column chunks of the same
fragment (x_frag[i, jj * 4 + j]). Compiled for sm_90a (ptxas -v), then run in tlc's interpreter
on 40 tokens, hc_mult3 = 24, hc_hidden_size = 1024 against float64 numpy."""
import subprocess, sys, types
sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub  # noqa: F401
sys.modules["tqdm"] = types.SimpleNamespace(trange=range)
import numpy as np
import tlc
import example_mhc_pre as q

hc3, hidden, n = 24, 1024, 40
k = q.mhc_pre_gemm_sqrsum_tilelang.compile(hc_mult3=hc3, hc_hidden_size=hidden)
ptx = k.get_kernel_source()
open("/tmp/mhc_pre.ptx", "w").write(ptx)
r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", "/tmp/mhc_pre.ptx", "-o", "/dev/null"],
                   capture_output=True, text=True)
print("ptxas:", " | ".join(l.split("info    : ")[-1] for l in r.stderr.splitlines()
                          if "registers" in l or "spill" in l))
print("tf32 mma.sync in PTX:", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx)
rng = np.random.default_rng(0)
bf = lambda a: (a.astype(np.float32).view(np.uint32) + 0x8000 & 0xFFFF0000).view(np.float32)
x = bf(rng.standard_normal((n, hidden)))
fn = rng.standard_normal((hc3, hidden)).astype(np.float32)
out = np.zeros((n, hc3), np.float32)
sq = np.zeros(n, np.float32)
tlc.interpret(k.get_mlir("optimized"), x, fn, out, sq)
ref = x.astype(np.float64) @ fn.T.astype(np.float64)
print(f"interpreter: out max |err| / max |ref| = {np.abs(out - ref).max() / np.abs(ref).max():.1e}"
      f" (tf32 operands), sqrsum max rel err = "
      f"{np.abs(sq - (x.astype(np.float64) ** 2).sum(1)).max() / (x.astype(np.float64) ** 2).sum(1).max():.1e}")
