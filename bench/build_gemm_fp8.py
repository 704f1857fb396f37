"""Compile the fp8 GEMM checks and benchmarks (no GPU needed).

    python bench/build_gemm_fp8.py OUT_DIR

examples/fp8_gemm.py on sm_90a (TMA + wgmma m64nNk32, warp-specialized).
Writes OUT_DIR/checks (e4m3 and e5m2 at 1000^3, 777 x 1000 x 520,
4096^3 and fewer K iterations than stages, K tiles of 64 and 32 bytes, for
test/gpu/run_artifacts.py;
the operands as stored NT, _scaled_mm's, and NN / TN / TT, which the
consumers transpose) and OUT_DIR/bench (bench_<config>_<size> for
bench/fp8_gemm_gpu.py; a config naming nn_ / tn_ / tt_ takes its operands
so stored).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import fp8_gemm  # noqa: E402
from checks import save_checked  # noqa: E402

CONFIGS = [(128, 256, 128, 256, 4), (128, 256, 128, 256, 3), (128, 128, 128, 256, 4)]
# NN / TN / TT: two transposed copies of the operand take shared memory
# beside the stages (TN: both operands, so no 128 x 256 block of 3 stages).
LAYOUT_CONFIGS = {"NN": [(128, 256, 128, 256, 3), (128, 128, 128, 256, 4)],
                  "TT": [(128, 256, 128, 256, 3), (128, 128, 128, 256, 4)],
                  "TN": [(128, 256, 128, 256, 2), (128, 128, 128, 256, 4)]}


def main(out: str) -> None:
    for sub in ("checks", "bench"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for a_dtype in ("float8_e4m3", "float8_e5m2"):
        for bm, bn, bk, threads, stages in CONFIGS[:2]:
            for m, n, k in ((1000, 1000, 1000), (777, 1000, 520), (4096, 4096, 4096),
                            (256, 512, 256)):
                kern = fp8_gemm.fp8_matmul(m, n, k, bm, bn, bk, threads, stages, a_dtype)
                assert "m64n" in kern.get_kernel_source()
                save_checked(kern.artifact, {
                    "expect": {"C": "(A.float() @ B.float().T * scale).to(C.dtype)"},
                    "scalars": {"scale": 0.25}, "atol": 0.5, "rtol": 2e-2, "seed": m},
                    os.path.join(out, "checks",
                                 f"fp8_{a_dtype}_{bm}x{bn}x{bk}s{stages}_{m}x{n}x{k}.tlcart"))
    # K tiles of 64 and 32 bytes (the 64- and 32-byte swizzles), NT.
    for bk, stages in ((64, 4), (32, 6)):
        for m, n, k in ((1000, 1000, 1000), (777, 1000, 520), (256, 512, 96)):
            kern = fp8_gemm.fp8_matmul(m, n, k, 128, 128, bk, 256, stages, "float8_e4m3")
            save_checked(kern.artifact, {
                "expect": {"C": "(A.float() @ B.float().T * scale).to(C.dtype)"},
                "scalars": {"scale": 0.25}, "atol": 0.5, "rtol": 2e-2, "seed": m},
                os.path.join(out, "checks", f"fp8_k{bk}_128x128x{bk}s{stages}_{m}x{n}x{k}.tlcart"))
    expect = {"NN": "A.float() @ B.float()", "TN": "A.float().T @ B.float()",
              "TT": "A.float().T @ B.float().T"}
    for layout, ref in expect.items():
        ta, tb = layout[0] == "T", layout[1] == "T"
        for a_dtype in ("float8_e4m3", "float8_e5m2"):
            # 64 x 64 blocks: operand tiles of 64-byte rows (a narrow transpose).
            for bm, bn, bk, threads, stages in LAYOUT_CONFIGS[layout] + [(64, 64, 128, 128, 3)]:
                for m, n, k in ((1000, 1000, 1000), (777, 1000, 520), (4096, 4096, 4096),
                                (256, 512, 256)):
                    kern = fp8_gemm.fp8_matmul(m, n, k, bm, bn, bk, threads, stages, a_dtype,
                                               trans_A=ta, trans_B=tb)
                    save_checked(kern.artifact, {
                        "expect": {"C": f"(({ref}) * scale).to(C.dtype)"},
                        "scalars": {"scale": 0.25}, "atol": 0.5, "rtol": 2e-2, "seed": m},
                        os.path.join(out, "checks", f"fp8_{layout}_{a_dtype}_{bm}x{bn}x{bk}"
                                                    f"s{stages}_{m}x{n}x{k}.tlcart"))
    for m, n, k in ((4096, 4096, 4096), (1000, 1000, 8192)):
        kern = fp8_gemm.fp8_matmul(m, n, k, 128, 128, 128, 256, 4, promote=True)
        save_checked(kern.artifact, {
            "expect": {"C": "(A.float() @ B.float().T * scale).to(C.dtype)"},
            "scalars": {"scale": 0.25}, "atol": 0.5, "rtol": 2e-2, "seed": m},
            os.path.join(out, "checks", f"fp8_promote_128x128x128s4_{m}x{n}x{k}.tlcart"))
    for size in (4096, 8192):
        for bm, bn, bk, threads, stages in CONFIGS:
            kern = fp8_gemm.fp8_matmul(size, size, size, bm, bn, bk, threads, stages)
            kern.save(os.path.join(out, "bench", f"bench_{bm}x{bn}x{bk}s{stages}_{size}.tlcart"))
        for bm, bn, bk, threads, stages in CONFIGS[2:]:
            kern = fp8_gemm.fp8_matmul(size, size, size, bm, bn, bk, threads, stages,
                                       promote=True)
            kern.save(os.path.join(out, "bench",
                                   f"bench_{bm}x{bn}x{bk}s{stages}promote_{size}.tlcart"))
        for layout in ("NN", "TN", "TT"):
            for bm, bn, bk, threads, stages in LAYOUT_CONFIGS[layout]:
                kern = fp8_gemm.fp8_matmul(size, size, size, bm, bn, bk, threads, stages,
                                           trans_A=layout[0] == "T", trans_B=layout[1] == "T")
                kern.save(os.path.join(out, "bench", f"bench_{layout.lower()}_{bm}x{bn}x{bk}"
                                                     f"s{stages}_{size}.tlcart"))
    print("wrote", sum(len(os.listdir(os.path.join(out, d))) for d in ("checks", "bench")),
          "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
