import sys, types; sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub as mock
sys.modules["tqdm"] = types.SimpleNamespace(trange=range)
import example_mhc_bwd as e, example_mhc_post as p, example_mhc_pre as q
import inspect
for name, call in [("mhc bwd n16", lambda: e.sinkhorn_bwd_implicit_cg.compile(n_stream=16, tilesize=32, threads=128)),
                   ("mhc post", lambda: p.mhc_post_tilelang.compile(hc=4, hidden=2560)),]:
    try:
        k = call(); print(name, "OK", len(k.get_kernel_source()))
    except Exception as ex:
        print(name, "FAIL", type(ex).__name__, str(ex)[:800])
print(inspect.signature(q.mhc_pre_big_fuse_tilelang.fn) if hasattr(q.mhc_pre_big_fuse_tilelang, "fn") else "")
print(inspect.signature(q.mhc_pre_gemm_sqrsum_tilelang.fn) if hasattr(q.mhc_pre_gemm_sqrsum_tilelang, "fn") else "")
