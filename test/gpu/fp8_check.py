#!/usr/bin/env python3
"""fp8 conversions on the GPU against torch (compile here, run there).

    python test/gpu/fp8_check.py build DIR   # compile the two kernels below
    python test/gpu/fp8_check.py check DIR   # on the GPU (torch with CUDA)

dequant: Y = float16(float32(X) * S[col]) with X float8_e4m3fn; quant: Y =
float8_e5m2(X) with X float32 in range (no saturation). Exits 1 on a
mismatch.
"""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build(out: Path) -> None:
    import tlc
    import tlc.language as T

    @T.prim_func
    def dequant(X: T.Tensor((256, 128), "float8_e4m3"), S: T.Tensor((128,), "float32"),
                Y: T.Tensor((256, 128), "float16")):
        with T.Kernel(2, threads=128) as bx:
            x = T.alloc_fragment((128, 128), "float8_e4m3")
            y = T.alloc_fragment((128, 128), "float16")
            T.copy(X[bx * 128, 0], x)
            for i, j in T.Parallel(128, 128):
                y[i, j] = T.cast(x[i, j], "float32") * S[j]
            T.copy(y, Y[bx * 128, 0])

    @T.prim_func
    def quant(X: T.Tensor((256, 128), "float32"), Y: T.Tensor((256, 128), "float8_e5m2")):
        with T.Kernel(2, threads=128) as bx:
            x = T.alloc_fragment((128, 128), "float32")
            T.copy(X[bx * 128, 0], x)
            T.copy(x, Y[bx * 128, 0])

    out.mkdir(parents=True, exist_ok=True)
    for prim in (dequant, quant):
        tlc.compile(prim, target="sm_90a").save(str(out / f"{prim.name}.tlcart"))


def check(out: Path) -> int:
    import torch

    sys.path.insert(0, str(REPO))
    from tlc import runtime

    torch.manual_seed(0)
    x = (torch.randn(256, 128, device="cuda") * 8).to(torch.float8_e4m3fn)
    s = torch.rand(128, device="cuda") + 0.5
    y = torch.full((256, 128), float("nan"), device="cuda", dtype=torch.float16)
    runtime.load_artifact(str(out / "dequant.tlcart"))(x, s, y)
    want = (x.float() * s).half()
    ok1 = torch.equal(y, want)
    print(("PASS" if ok1 else "FAIL"), "dequant e4m3 -> f16, max err",
          (y.float() - want.float()).abs().max().item())
    xf = torch.randn(256, 128, device="cuda") * 100
    q = torch.zeros(256, 128, device="cuda", dtype=torch.float8_e5m2)
    runtime.load_artifact(str(out / "quant.tlcart"))(xf, q)
    want_q = xf.to(torch.float8_e5m2)
    ok2 = torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
    diff = (q.view(torch.uint8) != want_q.view(torch.uint8)).sum().item()
    print(("PASS" if ok2 else "FAIL"), "quant f32 -> e5m2 (round to nearest even), bytes that "
          f"differ: {diff} of {q.numel()}")
    return 0 if ok1 and ok2 else 1


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("build", "check"):
        sys.exit(__doc__)
    where = Path(sys.argv[2])
    sys.exit(build(where) if sys.argv[1] == "build" else check(where))
