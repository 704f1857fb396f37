import sys; sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub as mock
import example_gqa_sink_bwd_bhsd as g, example_mha_sink_bwd_bhsd as m
for name, call in [("gqa sink fwd (heads 128)", lambda: g.flashattn_fwd(1, 128, 512, 128, groups=2, block_M=128, block_N=128, num_stages=2, threads=256)),
                   ("gqa sink prep", lambda: g.flashattn_bwd_preprocess(1, 8, 512, 128)),
                   ("gqa sink post", lambda: g.flashattn_bwd_postprocess(1, 8, 512, 128)),
                   ("gqa sink bwd", lambda: g.flashattn_bwd(1, 8, 512, 128, 2)),
                   ("gqa sink dsink", lambda: g.flashattn_bwd_dsink(1, 8, 512)),
                   ("mha sink bwd", lambda: m.flashattn_bwd(1, 8, 512, 128)),
                   ("mha sink dsink", lambda: m.flashattn_bwd_dsink(1, 8, 512))]:
    try:
        k = call(); print(name, "OK", len(k.get_kernel_source()))
    except Exception as e:
        print(name, "FAIL", type(e).__name__, str(e)[:400])
