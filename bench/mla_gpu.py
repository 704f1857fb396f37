"""Check and time tlc's MLA decode (examples/mla_decode.py) on the GPU machine.

    python bench/mla_gpu.py ARTIFACT_DIR

Every mla_check_* artifact runs sequences of mixed lengths (lengths no
page divides, 1 token, full tables; with split-KV, chunks with no pages)
over a cache whose pages are shuffled, against the fp32 torch reference,
outputs NaN-poisoned first. Every mla_bench_* artifact (all sequences of
the same length) is checked the same way, then timed (CUDA graph of 20
launches, median of 20 replays; best of two rounds) beside, in the same run:
the same math in eager torch on a contiguous cache (fp16 einsum + softmax,
what a user without a kernel writes), and a device copy of the cache's bytes
(the copy ceiling: bytes read + written / time). Bandwidth = bytes the
kernel must move (cache + q + out) / time; TFLOP/s = 2 * B * H * S * (576 +
512). Artifacts of examples/mla_decode_ws.py (`_ws`, bench/build_mla.py) and
examples/mla_decode_seesaw.py (`_seesaw`), and variants a session's build
script names `mla_bench_..._{variant}`, run the same way; each timing line
ends with the artifact's name. A failed check is reported, not timed, and
makes the run exit non-zero.
"""

import glob
import os
import re
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from mla_decode import random_inputs, reference  # noqa: E402

from tlc import runtime  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402

WIDTH, KV_DIM, PAGE = 576, 512, 64


def check(kernel, heads, lens) -> float:
    q, cache, table, seq_lens = random_inputs(torch, len(lens), heads, lens)
    full = torch.zeros(len(lens), kernel.params[2].shape[1], dtype=torch.int32, device="cuda")
    full[:, :table.shape[1]] = table
    out = torch.full((len(lens), heads, KV_DIM), float("nan"), device="cuda",
                     dtype=torch.float16)
    kernel(q, cache, full, seq_lens, out)
    ref = reference(torch, q, cache, full, seq_lens)
    torch.testing.assert_close(out, ref, rtol=1e-2, atol=1e-2)
    return (out.float() - ref.float()).abs().max().item()


def eager(q, cache):
    scores = torch.einsum("bhd,bsd->bhs", q, cache) * (WIDTH ** -0.5)
    return torch.einsum("bhs,bsd->bhd", scores.softmax(dim=-1), cache[..., :KV_DIM])


def main(art_dir: str) -> None:
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    checks, failed = 0, []
    for path in sorted(glob.glob(os.path.join(art_dir, "mla_check_*.tlcart"))):
        kernel = runtime.load_artifact(path)
        batch, heads, _ = kernel.params[0].shape
        most = kernel.params[2].shape[1] * PAGE
        for lens in ([most] * batch, [1 + (most - 1) * i // max(batch - 1, 1) for i in range(batch)],
                     [min(most, n) for n in (1000, 77, 1, 64, 4097, 65, 8191, 300)][:batch]):
            try:
                err = check(kernel, heads, lens)
            except AssertionError as e:
                failed.append(os.path.basename(path))
                print(f"check {os.path.basename(path):24s} lens {lens}  FAILED: {e}")
                continue
            checks += 1
            print(f"check {os.path.basename(path):24s} lens {lens}  max|err| {err:.1e}  ok")
    for path in sorted(glob.glob(os.path.join(art_dir, "mla_bench_*.tlcart")),
                       key=lambda p: (len(p), p)):
        kernel = runtime.load_artifact(path)
        batch, heads, _ = kernel.params[0].shape
        kv_len = kernel.params[2].shape[1] * PAGE
        try:
            err = check(kernel, heads, [kv_len] * batch)
        except AssertionError as e:  # not timed
            failed.append(os.path.basename(path))
            print(f"check {os.path.basename(path)} FAILED: {e}")
            continue
        checks += 1
        q, cache, table, seq_lens = random_inputs(torch, batch, heads, [kv_len] * batch)
        out = torch.empty(batch, heads, KV_DIM, device="cuda", dtype=torch.float16)
        flat = cache.view(batch, kv_len, WIDTH)  # eager torch on a contiguous cache
        copy_dst = torch.empty_like(cache)
        t_tlc = graph_time_ms(lambda: kernel(q, cache, table, seq_lens, out))
        t_copy = graph_time_ms(lambda: copy_dst.copy_(cache))
        t_eager = graph_time_ms(lambda: eager(q, flat))
        t_tlc = min(t_tlc, graph_time_ms(lambda: kernel(q, cache, table, seq_lens, out)))
        moved = (cache.numel() + q.numel() + out.numel()) * 2
        bw = moved / (t_tlc * 1e-3) / 1e9
        copy_bw = 2 * cache.numel() * 2 / (t_copy * 1e-3) / 1e9
        tflops = 2 * batch * heads * kv_len * (WIDTH + KV_DIM) / (t_tlc * 1e-3) / 1e12
        name = os.path.basename(path)[:-len(".tlcart")]
        # mla_bench_b{B}_s{S}[_split{N}][_{program}]: build_mla.PROGRAMS' suffixes, or a
        # variant's that a session's build script names
        parts = re.fullmatch(r"mla_bench_b\d+_s\d+(?:_split(\d+))?(?:_(\w+))?", name)
        split, program = (parts[1] or "1", parts[2] or "") if parts else ("?", name)
        print(f"B={batch:3d} S={kv_len:6d} split {split:>2s} {program:6s} tlc {t_tlc * 1e3:8.1f} us  "
              f"{bw:6.0f} GB/s = "
              f"{bw / copy_bw:.2f}x copy ({copy_bw:.0f} GB/s)  {tflops:5.1f} TFLOP/s  "
              f"eager torch {t_eager * 1e3:8.1f} us ({t_eager / t_tlc:.1f}x slower)  "
              f"max|err| {err:.1e}  {name}")
    print(f"{checks} checks passed")
    if failed:
        sys.exit(f"{len(failed)} checks FAILED: {', '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1])
