import sys; sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub as mock
import example_convolution as c1, example_convolution_autotune as c2
for name, call in [
    ("conv", lambda: c1.convolution.compile(N=8, C=64, H=32, W=32, F=128, K=3, S=1, D=1, P=1, block_M=64, block_N=128, block_K=32, num_stages=3, threads=256)),
    ("conv autotune pinned", lambda: c2.convolution.compile(N=8, C=64, H=32, W=32, F=128, K=3, S=1, D=1, P=1, **c2.get_heuristic_config())),
]:
    try:
        k = call(); print(name, "OK", type(k).__name__, len(k.get_kernel_source()))
    except Exception as ex:
        print(name, "FAIL", type(ex).__name__, str(ex)[:500])
