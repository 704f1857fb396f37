"""TileLang's examples/deepseek_mhc/example_mhc_post.py (scratch copy /tmp/fab, imports changed
to tlc; its code is not in this repository): compiled for sm_90a, registers and spills from
ptxas, then run in tlc's interpreter on n=3 tokens, hc=4, hidden=2560 against its own reference
formula in float64 numpy (bf16 inputs as float32 values, the output rounded to bf16)."""
import subprocess, sys, types
sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub  # noqa: F401
sys.modules["tqdm"] = types.SimpleNamespace(trange=range)
import numpy as np
import tlc
import example_mhc_post as p

hc, hidden, n = 4, 2560, 3
k = p.mhc_post_tilelang.compile(hc=hc, hidden=hidden)
open("/tmp/mhc_post.ptx", "w").write(k.get_kernel_source())
r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", "/tmp/mhc_post.ptx", "-o", "/dev/null"],
                   capture_output=True, text=True)
print("ptxas:", " | ".join(l.split("info    : ")[-1] for l in r.stderr.splitlines()
                          if "registers" in l or "spill" in l))
rng = np.random.default_rng(0)
bf = lambda a: (a.astype(np.float32).view(np.uint32) + 0x8000 & 0xFFFF0000).view(np.float32)
a = rng.standard_normal((n, hc, hc)).astype(np.float32)
b = bf(rng.standard_normal((n, hc, hidden)))
c = rng.standard_normal((n, hc)).astype(np.float32)
d = bf(rng.standard_normal((n, hidden)))
x = np.zeros((n, hc, hidden), np.float32)
tlc.interpret(k.get_mlir("optimized"), a, b, c, d, x)
ref = np.einsum("nij,nih->njh", a.astype(np.float64), b) + d[:, None, :] * c[:, :, None]
err = np.abs(x - ref).max() / np.abs(ref).max()
print(f"interpreter n={n} hc={hc} hidden={hidden}: max |x - ref| / max |ref| = {err:.1e}",
      "(bf16 output)", "OK" if err < 1e-2 else "WRONG")
