"""Worker processes of test_cache_lock.py: each compiles the same small kernel
through @tlc.jit, appends a line to COUNT for every compilation it runs, and
writes the PTX it got to OUT."""

import os
import time

import tlc
import tlc.language as T


@tlc.jit
def double(N):
    @T.prim_func
    def dbl(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            x = T.alloc_fragment((128,), "float32")
            T.copy(X[bx * 128], x)
            for i in T.Parallel(128):
                x[i] = x[i] * 2.0
            T.copy(x, Y[bx * 128])

    return dbl


def run(cache_dir: str, count: str, out: str, start, hang: bool = False,
        compile_seconds: float = 0.0) -> None:
    """Compiles double(1024) once `start` (an Event) is set. Every compilation
    is counted; it takes at least `compile_seconds`, and never ends if `hang`."""
    os.environ["TLC_CACHE_DIR"] = cache_dir
    import tlc.compiler

    real = tlc.compiler.compile_module

    def counted(*args, **kwargs):
        with open(count, "a") as f:
            f.write(f"{os.getpid()}\n")
        while hang:
            time.sleep(1)
        time.sleep(compile_seconds)
        return real(*args, **kwargs)

    tlc.compiler.compile_module = counted
    start.wait(60)
    kernel = double(1024)
    with open(out + ".tmp", "w") as f:
        f.write(kernel.get_kernel_source())
    os.replace(out + ".tmp", out)
