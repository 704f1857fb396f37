import sys, types; sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub as mock
torch = sys.modules["torch"]
class FakeTensor:
    def __init__(self, *shape): self.shape = tuple(shape)
    def __mul__(self, o): return self
    __rmul__ = __mul__
    def __sub__(self, o): return self
    __add__ = __sub__
torch.rand = lambda *s, **k: FakeTensor(*s)
torch.random = types.SimpleNamespace(manual_seed=lambda s: None)
torch.backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace()))
sys.modules["torch.backends"] = torch.backends
import tlc, tlc.language as T
import example_streamk as e
try:
    k = e.tl_matmul_streamk.compile(M=e.m, N=e.n, K=e.k, streamk_tiles=e.streamk_tiles, block_M=e.BLOCK_SIZE_M, block_N=e.BLOCK_SIZE_N, block_K=e.BLOCK_SIZE_K, trans_A=False, trans_B=True, dtypeAB=T.float16, dtypeC=T.float32, accum_dtype=T.float32, num_stages=2, threads=64)
    print("streamk OK", len(k.get_kernel_source()))
except Exception as ex:
    print("streamk FAIL", type(ex).__name__, str(ex)[:800])
import numpy as np, time
rng = np.random.default_rng(0)
a = (rng.random((e.m, e.k)) * 2 - 1).astype(np.float16)
b = (rng.random((e.n, e.k)) * 2 - 1).astype(np.float16)
c = np.zeros((e.m, e.n), np.float32)
t = time.time()
tlc.interpret(k.get_mlir("optimized"), a, b, c)
ref = a.astype(np.float64) @ b.astype(np.float64).T
print("streamk interpreter max |err|", float(abs(c - ref).max()), f"{time.time()-t:.1f}s")
