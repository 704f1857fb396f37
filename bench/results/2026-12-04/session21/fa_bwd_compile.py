import sys; sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub as mock
import example_mha_bwd_bshd as a, example_gqa_bwd as g
for name, call in [("bshd fwd", lambda: a.flashattn_fwd(2, 256, 4, 64, False, 64, 64)),
                   ("bshd post", lambda: a.flashattn_bwd_postprocess(2, 256, 4, 64)),
                   ("bshd bwd", lambda: a.flashattn_bwd(2, 256, 4, 64, False, 64, 64)),
                   ("gqa post", lambda: g.flashattn_bwd_postprocess(2, 8, 256, 128)),
                   ("gqa bwd atomic", lambda: g.flashattn_bwd_atomic_add(2, 8, 256, 128, 128, False, 128, 32, threads=256, num_stages=2, groups=2)),
                   ("gqa bwd split", lambda: g.flashattn_bwd_split(2, 8, 256, 128, 128, False, 128, 32, threads=256, num_stages=2, groups=2))]:
    try:
        k = call(); print(name, "OK", len(k.get_kernel_source()))
    except Exception as e:
        print(name, "FAIL", type(e).__name__, str(e)[:500])
