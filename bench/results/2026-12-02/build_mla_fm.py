import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples"))
import tlc, tlc.language as T
import mla_decode
out = sys.argv[1]; os.makedirs(out + "/plain", exist_ok=True); os.makedirs(out + "/fm", exist_ok=True)
pages = T.dynamic("pages")
fm = tlc.jit(out_idx=[4], pass_configs={"tl.enable_fast_math": True})(mla_decode.mla_decode.factory)
for batch, kv_len in ((132, 8192), (64, 1024)):
    n = f"mla_bench_b{batch}_s{kv_len}.tlcart"
    mla_decode.mla_decode(batch, 128, pages, kv_len // 64).save(os.path.join(out, "plain", n))
    fm(batch, 128, pages, kv_len // 64).save(os.path.join(out, "fm", n))
fm(4, 128, pages, 64).save(os.path.join(out, "fm", "mla_check_b4_p64.tlcart"))
print("ok")
