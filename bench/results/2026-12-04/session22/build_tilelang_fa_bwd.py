"""TileLang's examples/flash_attention/example_mha_bwd_bhsd.py (scratch copy /tmp/fab/ex.py, its
imports changed to tlc; its code is not in this repository), compiled by tlc for sm_90a at its
main()'s block sizes into OUT/tlbwd_<B>x<H>x<S>x<D>[_causal]_{fwd,delta,bwd,dq}.tlcart, which
bench/attention_backward_gpu.py runs like examples/attention_backward.py's."""
import os, sys
sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub  # noqa: F401  (the example imports torch at module level)
import ex

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for B, H, S, D, causal in [(2, 4, 256, 64, False), (2, 4, 256, 64, True), (1, 4, 1000, 64, True),
                           (8, 32, 1024, 64, False), (8, 32, 1024, 64, True),
                           (4, 32, 4096, 64, False)]:
    bm, bn_fwd, bn_bwd = 64, (64 if D <= 128 else 32), (64 if D <= 64 else 32)
    name = f"tlbwd_{B}x{H}x{S}x{D}{'_causal' if causal else ''}"
    kernels = {"fwd": ex.flashattn_fwd(B, H, S, D, causal, bm, bn_fwd),
               "delta": ex.flashattn_bwd_preprocess(B, H, S, D),
               "bwd": ex.flashattn_bwd(B, H, S, D, causal, bm, bn_bwd),
               "dq": ex.flashattn_bwd_postprocess(B, H, S, D)}
    for part, k in kernels.items():
        k.save(os.path.join(out, f"{name}_{part}.tlcart"))
    print("built", name, flush=True)
