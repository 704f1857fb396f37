#!/usr/bin/env python3
"""tlc kernels as PyTorch custom operators on a GPU (JITKernel.torch_op).

    python test/gpu/torch_op_check.py --build DIR       # compile, write DIR/*.tlcart (no GPU)
    python test/gpu/torch_op_check.py DIR [--lib PATH]  # on the GPU: load, register, check
    python test/gpu/torch_op_check.py                   # both (compiler and GPU in one place)

The kernels: vadd (C = A + B), axpy (Y += alpha * X, in place), a GEMM with a
T.dynamic M (fp16, N = 256, K = 128), vmul (C = A * B) and vmul_grads
(dA = G * B, dB = G * A: two outputs), all but the GEMM over a T.dynamic N.
Each is registered as tlc_check::NAME and compared with eager torch:

  eager            each op called directly (outputs allocated, axpy in place)
  opcheck          torch.library.opcheck: schema (mutations), fake vs real, AOT dispatch
  compile          torch.compile(fullgraph=True) over vadd, the in-place axpy and torch ops
  dynamic_m        the GEMM under torch.compile(dynamic=True) at M = 1000, 777, 64, 4096
                   without recompiling
  cuda_graph       vadd and the GEMM captured in a torch.cuda.CUDAGraph, replayed on new data
  compile_cudagraphs  the same under torch.compile(mode="reduce-overhead"), no CUDA graph skipped
  stream           on a side torch.cuda.Stream while the default stream is still busy
  autograd         a torch.autograd.Function: forward vmul, backward vmul_grads; eager and
                   under torch.compile(fullgraph=True)
  devices          a CPU tensor next to a CUDA one refused by name; cuda:1 when there is one

Prints one PASS/FAIL line per check; exits 1 if any failed. libtlc_runtime.so
is found as by tlc.runtime (TLC_RUNTIME_LIB, or beside tlc/runtime/driver.py);
--lib sets TLC_RUNTIME_LIB.
"""

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

try:
    import tlc
except ImportError:  # run from a checkout: python test/gpu/torch_op_check.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import tlc
import tlc.language as T  # noqa: E402
from tlc.jit import JITKernel  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from torch_op_kernels import axpy, vadd, vmul, vmul_grads  # noqa: E402

M = T.dynamic("M")
GEMM_N, GEMM_K = 256, 128


@T.prim_func
def gemm(A: T.Tensor((M, GEMM_K), "float16"), B: T.Tensor((GEMM_K, GEMM_N), "float16"),
         C: T.Tensor((M, GEMM_N), "float16")):
    with T.Kernel(T.ceildiv(GEMM_N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
        A_s = T.alloc_shared((128, 32), "float16")
        B_s = T.alloc_shared((32, 128), "float16")
        C_l = T.alloc_fragment((128, 128), "float32")
        T.clear(C_l)
        for k in T.Pipelined(T.ceildiv(GEMM_K, 32), num_stages=3):
            T.copy(A[by * 128, k * 32], A_s)
            T.copy(B[k * 32, bx * 128], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C[by * 128, bx * 128])


# name -> (prim_func, out_idx); out_idx is not part of an artifact.
KERNELS = {"vadd": (vadd, [-1]), "axpy": (axpy, None), "vmul": (vmul, [-1]),
           "vmul_grads": (vmul_grads, [3, 4]), "gemm": (gemm, [-1])}


def build(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (prim, out_idx) in KERNELS.items():
        tlc.compile(prim, out_idx=out_idx).save(str(folder / f"{name}.tlcart"))
        print(f"wrote {folder / name}.tlcart")


def load(folder: Path | None) -> dict:
    """The JITKernels: from DIR's artifacts, or compiled here."""
    if folder is None:
        return {name: tlc.compile(prim, out_idx=o) for name, (prim, o) in KERNELS.items()}
    from tlc.runtime import load_artifact

    return {name: JITKernel(load_artifact(folder / f"{name}.tlcart").to_dict(), {}, out_idx=o)
            for name, (_, o) in KERNELS.items()}


# ---- The checks ------------------------------------------------------------------


def check_eager(ops, torch):
    a, b = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    assert torch.equal(ops.vadd(a, b), a + b)
    y = torch.randn(1000, device="cuda")
    expected = y + 0.5 * a
    assert ops.axpy(a, y, 0.5) is None
    torch.testing.assert_close(y, expected)
    A = torch.randn(1000, GEMM_K, device="cuda", dtype=torch.float16)
    B = torch.randn(GEMM_K, GEMM_N, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(ops.gemm(A, B), (A.float() @ B.float()).half(), atol=0.1,
                               rtol=2e-2)
    da, db = ops.vmul_grads(y, a, b)
    assert torch.equal(da, y * b) and torch.equal(db, y * a)
    return "vadd, axpy in place, gemm M=1000, vmul_grads (two outputs)"


def check_opcheck(ops, torch):
    a, b = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    A = torch.randn(777, GEMM_K, device="cuda", dtype=torch.float16)
    B = torch.randn(GEMM_K, GEMM_N, device="cuda", dtype=torch.float16)
    for op, args in [(ops.vadd, (a, b)), (ops.axpy, (a, b.clone(), 0.5)), (ops.gemm, (A, B)),
                     (ops.vmul_grads, (a, b, a))]:
        result = torch.library.opcheck(op, args, raise_exception=False)
        failed = {k: v for k, v in result.items() if v != "SUCCESS"}
        assert not failed, f"{op}: {failed}"
    return "vadd, axpy, gemm, vmul_grads"


def check_compile(ops, torch):
    def f(x, y):
        c = ops.vadd(x, y)
        ops.axpy(x, c, 0.5)
        return c * 2

    g = torch.compile(f, fullgraph=True)
    for n in (1000, 4096):
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        torch.testing.assert_close(g(x, y), (x + y + 0.5 * x) * 2)
    return "vadd + in-place axpy + torch ops, fullgraph"


def check_dynamic_m(ops, torch):
    import torch._dynamo

    g = torch.compile(lambda a, b: torch.relu(ops.gemm(a, b)), fullgraph=True, dynamic=True)
    B = torch.randn(GEMM_K, GEMM_N, device="cuda", dtype=torch.float16)
    with torch._dynamo.config.patch(error_on_recompile=True):
        for m in (1000, 777, 64, 4096):
            A = torch.randn(m, GEMM_K, device="cuda", dtype=torch.float16)
            out = g(A, B)
            assert out.shape == (m, GEMM_N)
            torch.testing.assert_close(out, torch.relu((A.float() @ B.float()).half()),
                                       atol=0.1, rtol=2e-2)
    return "M = 1000, 777, 64, 4096, one compilation"


def check_cuda_graph(ops, torch):
    a, b = torch.randn(5000, device="cuda"), torch.randn(5000, device="cuda")
    A = torch.randn(1000, GEMM_K, device="cuda", dtype=torch.float16)
    B = torch.randn(GEMM_K, GEMM_N, device="cuda", dtype=torch.float16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up (the first call loads the module)
        ops.vadd(a, b)
        ops.gemm(A, B)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = ops.vadd(a, b)
        C = ops.gemm(A, B)
    for _ in range(2):
        a.copy_(torch.randn_like(a))
        b.copy_(torch.randn_like(b))
        A.copy_(torch.randn_like(A))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(c, a + b)
        torch.testing.assert_close(C, (A.float() @ B.float()).half(), atol=0.1, rtol=2e-2)
    return "vadd + gemm captured, replayed twice on new inputs"


def check_compile_cudagraphs(ops, torch):
    from torch._dynamo.utils import counters

    g = torch.compile(lambda x, y, A, B: (ops.vadd(x, y) * 2, ops.gemm(A, B)),
                      mode="reduce-overhead", fullgraph=True)
    skips = counters["inductor"]["cudagraph_skips"]
    for _ in range(4):  # warm-up, recording, then replays
        x, y = torch.randn(5000, device="cuda"), torch.randn(5000, device="cuda")
        A = torch.randn(1000, GEMM_K, device="cuda", dtype=torch.float16)
        B = torch.randn(GEMM_K, GEMM_N, device="cuda", dtype=torch.float16)
        c, C = g(x, y, A, B)  # compared before the next call reuses their memory
        assert torch.equal(c, (x + y) * 2)
        torch.testing.assert_close(C, (A.float() @ B.float()).half(), atol=0.1, rtol=2e-2)
    assert counters["inductor"]["cudagraph_skips"] == skips, "inductor skipped CUDA graphs"
    return "vadd + gemm under torch.compile(mode='reduce-overhead'), 4 calls"


def check_stream(ops, torch):
    a, b = torch.randn(1 << 20, device="cuda"), torch.randn(1 << 20, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    torch.cuda._sleep(1 << 30)  # keeps the default stream busy for a while
    with torch.cuda.stream(side):  # the kernel and the comparison, behind no sleep
        c = ops.vadd(a, b)
        done = torch.equal(c, a + b)
    busy = not torch.cuda.current_stream().query()
    torch.cuda.synchronize()
    assert done, "the result was not ready when the side stream finished"
    assert busy, "the default stream finished first: the sleep was too short to tell"
    return "ran on the side stream while the default stream slept"


def check_autograd(ops, torch):
    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return ops.vmul(a, b)

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return ops.vmul_grads(grad.contiguous(), a, b)

    def loss(fn, a, b, w):
        return (fn(a, b) * w).sum()

    compiled = torch.compile(lambda a, b, w: loss(Mul.apply, a, b, w), fullgraph=True)
    for run in (lambda a, b, w: loss(Mul.apply, a, b, w), compiled):
        a = torch.randn(3000, device="cuda", requires_grad=True)
        b = torch.randn(3000, device="cuda", requires_grad=True)
        w = torch.randn(3000, device="cuda")
        run(a, b, w).backward()
        ga, gb = a.grad.clone(), b.grad.clone()
        a.grad = b.grad = None
        loss(torch.mul, a, b, w).backward()
        torch.testing.assert_close(ga, a.grad)
        torch.testing.assert_close(gb, b.grad)
    return "vmul forward, vmul_grads backward; eager and torch.compile(fullgraph=True)"


def check_devices(ops, torch):
    from tlc.runtime import ArgumentError

    try:
        ops.vadd(torch.randn(8, device="cuda"), torch.randn(8))
    except ArgumentError as e:
        assert "argument 'B'" in str(e) and "cpu" in str(e), str(e)
    else:
        raise AssertionError("a CPU tensor next to a CUDA one was accepted")
    if torch.cuda.device_count() < 2:
        return "CPU tensor refused naming 'B' (one GPU: cuda:1 not checked)"
    a, b = (torch.randn(1000, device="cuda:1") for _ in range(2))
    assert torch.equal(ops.vadd(a, b), a + b) and ops.vadd(a, b).device == a.device
    try:
        ops.vadd(a, torch.randn(1000, device="cuda:0"))
    except ArgumentError as e:
        assert "argument 'B'" in str(e) and "cuda:0" in str(e), str(e)
    else:
        raise AssertionError("tensors on cuda:1 and cuda:0 were accepted")
    return "CPU tensor refused; cuda:1 runs; cuda:1 + cuda:0 refused"


CHECKS = [("eager", check_eager), ("opcheck", check_opcheck), ("compile", check_compile),
          ("dynamic_m", check_dynamic_m), ("cuda_graph", check_cuda_graph),
          ("compile_cudagraphs", check_compile_cudagraphs),
          ("stream", check_stream), ("autograd", check_autograd), ("devices", check_devices)]


class Ops:
    """The registered operators by kernel name."""

    def __init__(self, kernels: dict):
        for name, kernel in kernels.items():
            setattr(self, name, kernel.torch_op(f"tlc_check::{name}"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, help="folder of the artifacts")
    parser.add_argument("--build", action="store_true", help="compile the kernels into DIR")
    parser.add_argument("--lib", help="path of libtlc_runtime.so (sets TLC_RUNTIME_LIB)")
    opts = parser.parse_args()
    if opts.build:
        if opts.dir is None:
            parser.error("--build needs DIR")
        build(opts.dir)
        return 0
    if opts.lib:
        os.environ["TLC_RUNTIME_LIB"] = opts.lib
    import torch
    import torch._dynamo

    if hasattr(torch._dynamo.config, "error_on_graph_break"):
        torch._dynamo.config.error_on_graph_break = True
    if not torch.cuda.is_available():
        print(f"FAIL setup: torch {torch.__version__} sees no CUDA device")
        return 1
    start = time.perf_counter()
    ops = Ops(load(opts.dir))
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    failed = 0
    for name, check in CHECKS:
        t0 = time.perf_counter()
        try:
            detail = check(ops, torch)
            print(f"PASS {name}: {detail} ({time.perf_counter() - t0:.1f} s)")
        except Exception as e:  # noqa: BLE001  (every failure is reported, then the next check)
            failed += 1
            last = traceback.extract_tb(e.__traceback__)[-1]
            print(f"FAIL {name}: {type(e).__name__}: {str(e).strip()[:2000]} "
                  f"(line {last.lineno})")
    print(f"{len(CHECKS) - failed}/{len(CHECKS)} checks passed in "
          f"{time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
