"""Time tlc's GEMM against torch.matmul (cuBLAS) and a Triton matmul.

    python bench/gemm_gpu.py ARTIFACT_DIR [ROUNDS] [--nt | --layout XY]   (on the GPU machine)

fp16 or bf16 inputs (the artifacts' dtype), fp32 accumulation, output in the
input dtype, C = A @ B with M = N = K, or M x N x K for a size token MxNxK (with
--nt, C = A @ B^T, B stored N x K, and the peers given b.t(); --layout TN or
TT: A stored K x M too, the peers given a.t()). Each tlc
artifact bench_<config>_<size>.tlcart is timed with the same method as the
peers in this one run: 20 launches captured in a CUDA graph, the median of 20
timed replays (CUDA events), per launch. The card's clocks sag with power, so
each size is measured in ROUNDS (default 3) rounds that time cuBLAS, Triton
and every tlc config back to back; the table gives each one's median over the
rounds and the median of the per-round ratios. Inputs are random normal;
every output is checked against torch first. TFLOP/s = 2 M N K / time.
"""

import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tlc.profiler import graph_time_ms  # noqa: E402

from bench_artifacts import by_size  # noqa: E402

try:
    import triton
    import triton.language as tl
except ImportError:  # the bench still compares with cuBLAS
    triton = None


def time_ms(fn):
    return graph_time_ms(fn, per_graph=20, reps=20)


if triton is not None:
    @triton.jit
    def _mm(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
        pid = tl.program_id(0)
        npm, npn = tl.cdiv(M, BM), tl.cdiv(N, BN)
        group = pid // (GM * npn)
        first = group * GM
        gsize = min(npm - first, GM)
        pm = first + (pid % (GM * npn)) % gsize
        pn = (pid % (GM * npn)) // gsize
        rm = (pm * BM + tl.arange(0, BM)) % M
        rn = (pn * BN + tl.arange(0, BN)) % N
        rk = tl.arange(0, BK)
        ap = a + rm[:, None] * sam + rk[None, :] * sak
        bp = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            x = tl.load(ap, mask=rk[None, :] < K - k * BK, other=0.0)
            y = tl.load(bp, mask=rk[:, None] < K - k * BK, other=0.0)
            acc = tl.dot(x, y, acc)
            ap += BK * sak
            bp += BK * sbk
        cm = pm * BM + tl.arange(0, BM)
        cn = pn * BN + tl.arange(0, BN)
        tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc.to(c.dtype.element_ty),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))

    TRITON_CONFIGS = [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 32, 4, 4),
                      (256, 128, 64, 8, 3), (64, 128, 64, 4, 4)]

    def triton_best(a, b, c):
        """The fastest of TRITON_CONFIGS on these operands, as a callable."""
        M, K = a.shape
        N = b.shape[1]
        best, best_fn = None, None
        for bm, bn, bk, warps, stages in TRITON_CONFIGS:
            grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

            def fn(bm=bm, bn=bn, bk=bk, warps=warps, stages=stages, grid=grid):
                _mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                          b.stride(1), c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk, GM=8,
                          num_warps=warps, num_stages=stages)
            try:
                t = time_ms(fn)
            except Exception:  # a config that does not fit
                continue
            if best is None or t < best:
                best, best_fn = t, fn
        return best_fn


def main(art_dir: str, rounds: int = 3, nt: bool = False, ta: bool = False) -> None:
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"{os.path.basename(os.path.normpath(art_dir))}, "
          f"triton {triton.__version__ if triton else 'absent'}, {rounds} rounds")
    arts = by_size(art_dir)
    print(f"{'size':>6} {'config':>20} {'tlc TF/s':>9} {'cuBLAS':>8} {'triton':>8} "
          f"{'tlc/cuBLAS':>10} {'tlc/triton':>10}")
    med = statistics.median
    def dims(size: str):  # "4096" is 4096^3; "MxNxK" otherwise
        return tuple(int(d) for d in size.split("x")) if "x" in size else (int(size),) * 3

    for size in sorted(arts, key=lambda s: (len(dims(s)), dims(s))):
        m, n, k = dims(size)
        dtype = getattr(torch, arts[size][0][1].params[0].dtype)
        a = torch.randn(*((k, m) if ta else (m, k)), device="cuda", dtype=dtype)
        b = torch.randn(*((n, k) if nt else (k, n)), device="cuda", dtype=dtype)
        c = torch.empty(m, n, device="cuda", dtype=dtype)
        rhs = b.t() if nt else b  # what the peers multiply by
        lhs = a.t() if ta else a
        ref = (lhs.float() @ rhs.float()).to(dtype)
        flops = 2 * m * n * k
        tf = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
        ok = {}
        for config, kernel in arts[size]:
            c.fill_(float("nan"))
            kernel(a, b, c)
            torch.cuda.synchronize()
            ok[config] = torch.allclose(c.float(), ref.float(), rtol=2e-2, atol=2e-1)
        triton_fn = triton_best(lhs, rhs, c) if triton else None
        t_cublas, t_triton, t_tlc = [], [], {config: [] for config, _ in arts[size]}
        for _ in range(rounds):
            t_cublas.append(time_ms(lambda: torch.matmul(lhs, rhs, out=c)))
            if triton_fn:
                t_triton.append(time_ms(triton_fn))
            for config, kernel in arts[size]:
                t_tlc[config].append(time_ms(lambda: kernel(a, b, c)))
        for config, _ in arts[size]:
            ts = t_tlc[config]
            vs_cublas = med([tc / t for tc, t in zip(t_cublas, ts)])
            tri = f"{tf(med(t_triton)):8.0f}" if t_triton else f"{'-':>8}"
            rel = (f"{med([tt / t for tt, t in zip(t_triton, ts)]):10.3f}" if t_triton
                   else f"{'-':>10}")
            print(f"{size:>6} {config:>20} {tf(med(ts)):9.0f} {tf(med(t_cublas)):8.0f} {tri} "
                  f"{vs_cublas:10.3f} {rel}{'' if ok[config] else '  WRONG RESULT'}",
                  flush=True)


if __name__ == "__main__":
    argv = sys.argv[1:]
    layout = "NT" if "--nt" in argv else "NN"
    if "--layout" in argv:
        layout = argv[argv.index("--layout") + 1].upper()
        del argv[argv.index("--layout"):argv.index("--layout") + 2]
    args = [a for a in argv if a != "--nt"]
    main(args[0], int(args[1]) if len(args) > 1 else 3, nt=layout[1] == "T",
         ta=layout[0] == "T")
