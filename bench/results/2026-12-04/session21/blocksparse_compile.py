import sys; sys.path.insert(0, "/tmp/fab")
import fa_bwd_torch_stub as mock
import types
sys.modules["tlc.utils.tensor"] = __import__("tlc.utils.tensor", fromlist=["x"])
import example_blocksparse_gemm as e
try:
    k = e.blocksparse_matmul.compile(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32, num_stages=2, thread_num=128, enable_rasteration=True)
    print("OK", type(k).__name__, len(k.get_kernel_source()))
except Exception as ex:
    import traceback; traceback.print_exc()
