import glob, os, sys, torch
sys.path.insert(0, os.getcwd())
from tlc import runtime
from tlc.profiler import graph_time_ms
for n in ("4x32x4096x64", "8x32x1024x64"):
    B, H, S, D = map(int, n.split("x"))
    r = lambda *s, dt=torch.float16: torch.randn(*s, device="cuda").to(dt)
    q, k, v, do, o = (r(B, H, S, D) for _ in range(5))
    lse = torch.full((B, H, S), 4.0, device="cuda"); delta = r(B, H, S, dt=torch.float32)
    dqa = torch.zeros(B, H, S, D, device="cuda"); dq, dk, dv = (r(B, H, S, D) for _ in range(3))
    t0 = graph_time_ms(lambda: dqa.zero_())
    print(n, f"zero {t0*1e3:.1f} us", flush=True)
    for who in ("tl", "our", "new", "tile", "async", "asynctile"):
        ks = {p: runtime.load_artifact(f".gpu/parts/{n}_{who}_{p}.tlcart") for p in ("bwd", "delta", "dq")}
        tb = graph_time_ms(lambda: ks["bwd"](q, k, v, do, lse, delta, dqa, dk, dv))
        td = graph_time_ms(lambda: ks["delta"](o, do, delta))
        tq = graph_time_ms(lambda: ks["dq"](dqa, dq))
        print(n, who, f"bwd {tb*1e3:.1f} us  delta {td*1e3:.1f} us  dq {tq*1e3:.1f} us", flush=True)
