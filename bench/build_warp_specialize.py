"""Compile the checks and benchmarks of hand-written warp specialization
(T.ws + T.alloc_barrier, examples/warp_specialize.py) for sm_90a (no GPU needed).

    python bench/build_warp_specialize.py OUT_DIR

Writes
- OUT_DIR/checks: checked artifacts for test/gpu/run_artifacts.py: the
  producer/consumer GEMM with 1 to 3 stages of its ring, the staged-ring
  GEMM (T.tma_copy into stages of one buffer) with 2 to 4, the
  one-stage program staged by T.Pipelined (pipelined_bodies) with 1 to 3, and the
  column-split GEMM (T.ws bodies, and its twin branching on the thread
  index), at sizes no tile divides and at 4096^3; a T.tma_copy
  of 512-byte rows (loaded as 128-byte column blocks);
- OUT_DIR/nn_float16: benchmark artifacts for bench/gemm_gpu.py at 4096 and
  8192: the programs, and beside them the compiler's own warp-specialized
  GEMM (examples/gemm.py: TMA producer, wgmma consumers) with the same
  128 x 128 x 64 tile, for comparison.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import gemm  # noqa: E402
import tlc  # noqa: E402
from checks import save_checked  # noqa: E402
from warp_specialize import (pipelined_bodies, producer_consumer,  # noqa: E402
                             split_columns, split_columns_by_thread, staged_ring)

EXPECT = {"expect": {"C": "(A.float() @ B.float()).to(C.dtype)"}, "atol": 0.2, "rtol": 2e-2}


def main(out: str) -> None:
    pc = tlc.jit(out_idx=[-1], target="sm_90a")(producer_consumer.factory)
    sc = tlc.jit(out_idx=[-1], target="sm_90a")(split_columns.factory)
    sct = tlc.jit(out_idx=[-1], target="sm_90a")(split_columns_by_thread.factory)
    ring = tlc.jit(out_idx=[-1], target="sm_90a")(staged_ring.factory)
    piped = tlc.jit(out_idx=[-1], target="sm_90a")(pipelined_bodies.factory)
    auto = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
    os.makedirs(os.path.join(out, "checks"), exist_ok=True)
    for m, n, k in ((1000, 1000, 1000), (777, 1000, 520), (4096, 4096, 4096)):
        for stages in (1, 2, 3):
            save_checked(pc(m, n, k, stages=stages).artifact, {**EXPECT, "seed": m + stages},
                         os.path.join(out, "checks", f"ws_prog_s{stages}_{m}x{n}x{k}.tlcart"))
        for stages in (2, 3, 4):
            save_checked(ring(m, n, k, stages=stages).artifact, {**EXPECT, "seed": k + stages},
                         os.path.join(out, "checks", f"ws_ring_s{stages}_{m}x{n}x{k}.tlcart"))
        for stages in (1, 2, 3):
            save_checked(piped(m, n, k, stages=stages).artifact,
                         {**EXPECT, "seed": n + stages},
                         os.path.join(out, "checks", f"ws_piped_s{stages}_{m}x{n}x{k}.tlcart"))
        save_checked(sc(m, n, k).artifact, {**EXPECT, "seed": m},
                     os.path.join(out, "checks", f"ws_split_{m}x{n}x{k}.tlcart"))
        save_checked(sct(m, n, k).artifact, {**EXPECT, "seed": n},
                     os.path.join(out, "checks", f"ws_split_by_thread_{m}x{n}x{k}.tlcart"))
    sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
    from test_warp_specialize import wide_rows  # T.tma_copy of 512-byte rows

    save_checked(tlc.compile(wide_rows, target="sm_90a").artifact, {"expect": {"B": "A + 1"}},
                 os.path.join(out, "checks", "ws_tma_wide_rows.tlcart"))
    folder = os.path.join(out, "nn_float16")
    os.makedirs(folder, exist_ok=True)
    for size in (4096, 8192):
        for stages in (2, 3):
            pc(size, size, size, stages=stages).save(
                os.path.join(folder, f"bench_wsprog128x128x64s{stages}_{size}.tlcart"))
        for stages in (3, 4):
            piped(size, size, size, stages=stages).save(
                os.path.join(folder, f"bench_wspiped128x128x64s{stages}_{size}.tlcart"))
            ring(size, size, size, stages=stages).save(
                os.path.join(folder, f"bench_wsring128x128x64s{stages}_{size}.tlcart"))
        sc(size, size, size).save(os.path.join(folder, f"bench_wssplit128x128x64_{size}.tlcart"))
        auto(size, size, size, 128, 128, 64, 256, 3).save(
            os.path.join(folder, f"bench_auto128x128x64s3_{size}.tlcart"))
    total = sum(len(files) for _, _, files in os.walk(out))
    print("wrote", total, "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
