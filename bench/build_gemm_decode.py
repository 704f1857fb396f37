"""Compile block configurations for the decode GEMM shapes (no GPU needed).

    python bench/build_gemm_decode.py OUT_DIR

M = 64 and 128 with N = K = 8192 (fp16, NN and NT): a few M rows against a
large weight, so the time is reading B once (128 MiB) and the question is
whether enough blocks keep enough bytes in flight. Configurations with more
blocks (narrower N tiles), deeper pipelines and wgmma groups left pending are
compiled beside the ones bench/build_gemm_ws.py times. Writes
OUT_DIR/decode_{nn,nt}/bench_<config>_<M>x8192x8192.tlcart for
bench/gemm_gpu.py (with --nt for decode_nt).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import gemm  # noqa: E402
import tlc  # noqa: E402
from tlc.errors import CompilationError  # noqa: E402

# (block_M, block_N, block_K, threads, stages, wg_wait)
CONFIGS = {
    64: [(64, 128, 64, 128, 4, None), (64, 64, 64, 128, 6, None), (64, 64, 64, 128, 8, None),
         (64, 64, 128, 128, 4, None), (64, 128, 64, 128, 8, None), (64, 64, 64, 128, 8, 1),
         (64, 128, 128, 128, 4, None)],
    128: [(128, 128, 64, 256, 4, None), (64, 128, 64, 128, 4, None), (128, 64, 64, 256, 6, None),
          (128, 64, 64, 256, 8, None), (128, 64, 128, 256, 4, None), (64, 64, 64, 128, 8, None),
          (128, 64, 64, 256, 8, 1), (64, 128, 64, 128, 8, None)],
}


def main(out: str) -> None:
    matmul = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
    written = 0
    for layout, trans_b in (("nn", False), ("nt", True)):
        folder = os.path.join(out, f"decode_{layout}")
        os.makedirs(folder, exist_ok=True)
        for m, configs in CONFIGS.items():
            for bm, bn, bk, threads, stages, wait in configs:
                name = f"bench_{bm}x{bn}x{bk}s{stages}{f'w{wait}' if wait else ''}_{m}x8192x8192"
                try:
                    kernel = matmul(m, 8192, 8192, bm, bn, bk, threads, stages, trans_B=trans_b,
                                    wg_wait=wait)
                except CompilationError as e:
                    print(f"{layout} {name}: not compiled: {str(e).splitlines()[0]}")
                    continue
                kernel.save(os.path.join(folder, name + ".tlcart"))
                written += 1
    print("wrote", written, "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
