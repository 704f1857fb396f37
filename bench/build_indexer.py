"""Compile the GPU checks of fragment views, permuted fragment indices,
T.thread_binding and DeepSeek's lightning indexer (no GPU needed).

    python bench/build_indexer.py OUT_DIR

- test/python/test_fragment_views.py's programs (a fragment reshaped and
  reduced per group, a gemm accumulator viewed per head and written
  transposed, an accumulator read in a loop over (j, i)) and
  test_thread_binding.py's window mask and shared memory in code only some
  threads run (an `if` and a `while` on the thread index, TileLang's split-K
  GEMV) and test_simt.py's radix histogram and scan (shared atomics, a
  named barrier in code half the block runs), a fragment region copied out and
  in, a float16 fragment reduced into float32, a shared tile read by wgmma as
  a K-major B and as an M-major A, for sm_90a and sm_80;
- examples/lightning_indexer.py (sm_90a: fp8 wgmma with K tiles of 64, a
  warp-specialized loop whose copies start at a T.alloc_var computed in the
  kernel, the accumulator viewed per head, and a second kernel masking the
  windows) at two sizes no block divides, against the same math in torch,
  with the example's blocks (128 keys, 256 threads) and TileLang's (256
  keys, 512 threads).

Each is OUT_DIR/<name>.tlcart with a check for test/gpu/run_artifacts.py.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, HERE)

from checks import save_checked, save_checked_programs  # noqa: E402
import lightning_indexer  # noqa: E402
import test_fragment_views as fv  # noqa: E402
import test_reduce_options as ro  # noqa: E402
import test_shared_operands as so  # noqa: E402
import test_simt as simt  # noqa: E402
import test_thread_binding as tb  # noqa: E402

# test_simt.radix_histogram's histogram of the keys' top 8 bits, per row.
KEYS = ("torch.where(X < 0, ~(X.view(torch.int32).long() & 0xFFFFFFFF) & 0xFFFFFFFF, "
        "(X.view(torch.int32).long() & 0xFFFFFFFF) | 0x80000000) >> 24")
HIST = f"torch.stack([torch.bincount(k, minlength=256) for k in {KEYS}]).int()"

CHECKS = [
    (fv.weighted_head_sums, {"expect": {"S": "(A.reshape(64, 4, 32).clamp(min=0) * W).sum(2)"},
                             "atol": 1e-4, "rtol": 1e-5}),
    (fv.accumulator_head_sums, {"expect": {
        "S": "(K.float() @ Q.float().T).reshape(128, 4, 32).sum(2).T"},
        "atol": 1e-2, "rtol": 1e-3}),
    (fv.first_rows_of_an_accumulator, {"expect": {
        "O": "(A.float() @ B.float().T)[:4]",
        "P": "torch.cat([(A.float() @ B.float().T)[:8], (A.float() @ B.float().T)[:4], "
             "(A.float() @ B.float().T)[12:]])"}, "atol": 1e-2, "rtol": 1e-3}),
    (fv.transposed_accumulator, {"expect": {"C": "A.float() @ B.float().T",
                                            "D": "(A.float() @ B.float().T).T + 1"},
                                 "atol": 1e-2, "rtol": 1e-3}),
    (tb.mask_outside_windows, {
        "inputs": {"lo": [0, 10, 500, 999], "hi": [1000, 20, 700, 1000]},
        "expect": {"L": "L.masked_fill((torch.arange(1000, device=L.device)[None, :] < "
                        "lo[:, None].long()) | (torch.arange(1000, device=L.device)[None, :] "
                        ">= hi[:, None].long()), -math.inf)"}}),
    (tb.shared_under_if, {"expect": {"A": "torch.cat([A[32:], A[32:]])"}}),
    (tb.shared_in_thread_loop, {"expect": {"A": "A * 2"}}),
    (tb.split_k_gemv, {"expect": {"C": "B.float() @ A.float()"}, "atol": 1e-2, "rtol": 1e-3}),
    (simt.radix_histogram, {"expect": {"H": HIST, "S": HIST + ".flip(1).cumsum(1).flip(1).int()"}}),
    (ro.half_max_into_float, {"expect": {"M": "X.float().amax(0)"}}),
    (so.two_ways, {"expect": {"S": "Q.float() @ K.float().T", "H": "K.float().T @ V.float()"},
                   "atol": 1e-2, "rtol": 1e-3}),
]

# logits[s, n] = sum_h relu(q[s, h] . k[n]) * weights[s, h] * k_scale[n] inside the window.
INDEXER_EXPECT = (
    "(torch.einsum('shd,nd->shn', q.float().view(weights.shape[0], weights.shape[1], -1), "
    "k.float()).relu() * weights[:, :, None]).sum(1).mul(k_scale[None, :]).masked_fill("
    "~((torch.arange(k.shape[0], device=k.device)[None, :] >= starts[:, None].long()) & "
    "(torch.arange(k.shape[0], device=k.device)[None, :] < ends[:, None].long())), "
    "-math.inf)")


def windows(seq: int, seq_kv: int):
    """Query s sees keys [s // 2, min(s // 2 + seq_kv - seq + 1 + s // 3, seq_kv))."""
    starts = [s // 2 for s in range(seq)]
    ends = [min(s // 2 + seq_kv - seq + 1 + s // 3, seq_kv) for s in range(seq)]
    return starts, ends


def main(out: str) -> None:
    save_checked_programs(CHECKS, out)
    # The example's blocks (128 keys, two warpgroups) and TileLang's (256 keys, four).
    for block_n, threads in ((128, 256), (256, 512)):
        kernel = lightning_indexer.indexer_logits.compile(heads=32, dim=64, block_n=block_n,
                                                          threads=threads)
        for seq, seq_kv in ((256, 1024), (1000, 3001)):
            starts, ends = windows(seq, seq_kv)
            check = {"symbols": {"seq": seq, "seq_kv": seq_kv},
                     "inputs": {"k_scale": "rand", "starts": starts, "ends": ends},
                     "expect": {"logits": INDEXER_EXPECT}, "atol": 2e-2, "rtol": 1e-3}
            save_checked(kernel.artifact, check, os.path.join(
                out, f"lightning_indexer_n{block_n}t{threads}_{seq}x{seq_kv}.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
