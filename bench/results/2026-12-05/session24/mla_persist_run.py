"""TileLang's example_mla_decode_persistent.py as tlc compiled it (T.sync_grid between the
split and combine phases), checked against torch and timed."""
import glob, os, sys
import torch
sys.path.insert(0, os.getcwd())
from tlc import runtime
from tlc.profiler import graph_time_ms
for path in sorted(glob.glob(".gpu/mla_persist/*.tlcart")):
    k = runtime.load_artifact(path)
    name = os.path.basename(path)
    b, ctx = [int(x[1:] if x[0] == "b" else x[3:]) for x in name[:-7].split("_")[2:4]]
    h, d, pe, split = 128, 512, 64, 2
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, h, d, device="cuda", generator=g).half()
    qp = torch.randn(b, h, pe, device="cuda", generator=g).half()
    kv = torch.randn(b, ctx, 1, d, device="cuda", generator=g).half()
    kp = torch.randn(b, ctx, 1, pe, device="cuda", generator=g).half()
    glse = torch.empty(b, h, split, device="cuda").half()
    part = torch.empty(b, h, split, d, device="cuda").half()
    out = torch.full((b, h, d), float("nan"), device="cuda").half()
    k(q, qp, kv, kp, glse, part, out)
    torch.cuda.synchronize()
    s = (q.float() @ kv[:, :, 0].float().transpose(1, 2) + qp.float() @ kp[:, :, 0].float().transpose(1, 2)) / (d + pe) ** 0.5
    ref = torch.softmax(s, -1) @ kv[:, :, 0].float()
    err = (out.float() - ref).abs().max().item()
    ok = err < 1e-2 and not torch.isnan(out).any()
    ms = graph_time_ms(lambda: k(q, qp, kv, kp, glse, part, out))
    gb = (kv.numel() + kp.numel()) * 2 / 1e9
    print("PASS" if ok else "FAIL", name, f"max_abs_err={err:.3g}", f"{ms * 1e3:.1f} us", f"KV {gb / ms * 1e3:.0f} GB/s", flush=True)
