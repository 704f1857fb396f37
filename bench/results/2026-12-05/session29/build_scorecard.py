"""Build the artifacts of issue 9's scorecard, timed in one run by gpu_run.sh
(next to this script); no GPU needed:

    python bench/results/2026-12-05/session29/build_scorecard.py .gpu/s29

examples/gemm.py and examples/fp8_gemm.py unchanged, sm_90a:
- OUT/{nn,nt}_{float16,bfloat16}: 4096^3 and 8192^3 on 128x256x64 and
  256x128x64 blocks (3 stages, panel 8), the configs measured before;
- OUT/small_nn: 1024^3 (64x128x64 and 128x128x64) and 2048^3 (128x128x64,
  128x256x64), fp16;
- OUT/decode_{nn,nt}: M = 64 (64x128x64, 8 stages) and M = 128 (128x64x64,
  8 stages) with N = K = 8192, fp16, bench/build_gemm_decode.py's best;
- OUT/kheavy: 256 x 1024 x 32768 and 512 x 512 x 16384 on 128x128 (4 stages),
  128x256 and 256x128 blocks (256x128 on 256 x 1024 x 32768 is a single row of
  8 tiles: stream-K since session 28);
- OUT/fp8: e4m3 NT (A M x K, B N x K: what torch._scaled_mm takes) at 4096^3
  and 8192^3, 128x256x128 s3 and 128x128x128 s4;
- OUT/attention: issue 10's FlashAttention configs (examples/attention.py's
  defaults, B = 8, H = 32, S = 4096 fp16: head dim 128 and causal, GQA 4,
  head dim 64 on 192 x 128 blocks, head dim 256 on 128 x 64) for
  bench/attention_gpu.py, named as bench/build_attention_bench.py names them;
- OUT/sass: the 4096^3 fp16 NN 128x256x64 kernel and the fp8 one assembled by
  ptxas (sm_90a) into cubins, for cuobjdump on the GPU machine, and ptxas's
  registers and spills for them (OUT/sass/ptxas.txt).
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples"))

sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))

import attention  # noqa: E402
import build_attention_bench  # noqa: E402
import fp8_gemm  # noqa: E402
import gemm  # noqa: E402
import tlc  # noqa: E402


def save(kern, folder, name):
    os.makedirs(folder, exist_ok=True)
    kern.save(os.path.join(folder, name + ".tlcart"))
    return kern


def main(out: str) -> None:
    matmul = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
    for_sass = {}
    for layout, trans_b in (("nn", False), ("nt", True)):
        for dtype in ("float16", "bfloat16"):
            for size in (4096, 8192):
                for bm, bn in ((128, 256), (256, 128)):
                    kern = save(matmul(size, size, size, bm, bn, 64, 256, 3, dtype,
                                       trans_B=trans_b, panel=8),
                                os.path.join(out, f"{layout}_{dtype}"),
                                f"bench_{bm}x{bn}x64s3p8_{size}")
                    if (layout, dtype, size, bm) == ("nn", "float16", 4096, 128):
                        for_sass["gemm_nn_f16_128x256x64s3p8_4096"] = kern
    for size, bm, bn, threads, stages in ((1024, 64, 128, 128, 4), (1024, 128, 128, 128, 4),
                                          (2048, 128, 128, 128, 4), (2048, 128, 256, 256, 3)):
        save(matmul(size, size, size, bm, bn, 64, threads, stages, "float16", panel=8),
             os.path.join(out, "small_nn"), f"bench_{bm}x{bn}x64s{stages}p8_{size}")
    for layout, trans_b in (("nn", False), ("nt", True)):
        for m, bm, bn, threads in ((64, 64, 128, 128), (128, 128, 64, 256)):
            save(matmul(m, 8192, 8192, bm, bn, 64, threads, 8, "float16", trans_B=trans_b),
                 os.path.join(out, f"decode_{layout}"), f"bench_{bm}x{bn}x64s8_{m}x8192x8192")
    for m, n, k in ((256, 1024, 32768), (512, 512, 16384)):
        for bm, bn, threads, stages in ((128, 128, 128, 4), (128, 256, 256, 3), (256, 128, 256, 3)):
            save(matmul(m, n, k, bm, bn, 64, threads, stages, "float16", panel=8),
                 os.path.join(out, "kheavy"), f"bench_{bm}x{bn}x64s{stages}p8_{m}x{n}x{k}")
    for size in (4096, 8192):
        for bm, bn, stages in ((128, 256, 3), (128, 128, 4)):
            kern = save(fp8_gemm.fp8_matmul(size, size, size, bm, bn, 128, 256, stages,
                                            "float8_e4m3"),
                        os.path.join(out, "fp8"), f"bench_{bm}x{bn}x128s{stages}_{size}")
            if (size, bm) == (4096, 128) and stages == 3:
                for_sass["fp8_nt_128x256x128s3_4096"] = kern
    for config in ((128, 32, 128, 128, 2, 256, False), (128, 32, 128, 128, 2, 256, True, True),
                   (128, 8, 128, 128, 2, 256, False), (64, 32, 192, 128, 2, 384, False),
                   (64, 32, 192, 128, 2, 384, True, True), (256, 32, 128, 64, 2, 256, False),
                   (256, 32, 128, 64, 2, 256, True, True)):
        dim, heads_kv, bm, bn, stages, threads, causal, *branch = config
        save(attention.attention(8, 32, 4096, dim, causal, heads_kv=heads_kv, block_M=bm,
                                 block_N=bn, num_stages=stages, threads=threads,
                                 branch_masks=bool(branch)),
             os.path.join(out, "attention"), build_attention_bench.name(*config))
    sass = os.path.join(out, "sass")
    os.makedirs(sass, exist_ok=True)
    report = []
    for name, kern in for_sass.items():
        ptx = kern.get_kernel_source()
        ptx_path = os.path.join(sass, name + ".ptx")
        with open(ptx_path, "w") as f:
            f.write(ptx)
        done = subprocess.run(["ptxas", "-arch=sm_90a", "-v", ptx_path, "-o",
                               os.path.join(sass, name + ".cubin")],
                              capture_output=True, text=True, check=True)
        os.remove(ptx_path)
        report.append(f"{name}:\n{done.stderr}")
    with open(os.path.join(sass, "ptxas.txt"), "w") as f:
        f.write("\n".join(report))


if __name__ == "__main__":
    main(sys.argv[1])
