"""On a GPU: thread bindings, `while`, T.vectorized and T.Persistent programs
give what the interpreter gives (run by hand on the H200; skipped where there
is no GPU). The programs are those of the CPU tests of each construct."""

import numpy as np
import pytest

import tlc
import test_persistent as persistent
import test_thread_binding as threads
import test_while_vectorized as loops

pytestmark = pytest.mark.gpu


def agree(prim, *inputs, rtol=0.0, atol=0.0):
    """Runs `prim` compiled on the GPU and in the interpreter on copies of
    `inputs` (numpy arrays and scalars; outputs are written in place) and
    compares every array afterwards."""
    import torch

    gpu = [torch.from_numpy(x.copy()).cuda() if isinstance(x, np.ndarray) else x
           for x in inputs]
    cpu = [x.copy() if isinstance(x, np.ndarray) else x for x in inputs]
    tlc.compile(prim)(*gpu)
    tlc.interpret(prim, *cpu)
    torch.cuda.synchronize()
    for g, c in zip(gpu, cpu):
        if isinstance(c, np.ndarray):
            np.testing.assert_allclose(g.cpu().numpy(), c, rtol=rtol, atol=atol)


def rng(seed=0):
    return np.random.default_rng(seed)


def test_thread_bindings():
    agree(threads.scale_2d, np.arange(256, dtype=np.float32), np.zeros(256, np.float32))
    agree(threads.indices_3d, np.full((3, 60), -1, np.int32))
    agree(threads.zero_dims, np.full(64, -1, np.int32))
    agree(threads.reverse_shared, np.arange(128, dtype=np.float32),
          np.zeros(128, np.float32))
    agree(threads.strided_sums, rng().standard_normal(1000).astype(np.float32),
          np.zeros(128, np.float32), rtol=1e-6)
    agree(threads.count_threads, np.zeros(2, np.int32))
    agree(threads.keeps_register_across_parallel, np.arange(128, dtype=np.float32),
          np.zeros(128, np.float32), np.zeros(128, np.float32))
    agree(threads.gemv(1024, 512), rng(1).standard_normal((1024, 512)).astype(np.float16),
          rng(2).standard_normal(512).astype(np.float16), np.zeros(1024, np.float32),
          rtol=1e-5, atol=1e-4)


def test_while_and_vectorized():
    agree(loops.collatz_steps, np.arange(1, 129, dtype=np.int32), np.zeros(128, np.int32))
    a = rng(3).standard_normal((64, 64)).astype(np.float32)
    agree(loops.repeat_accumulate, a, 3, np.zeros((64, 64), np.float32))
    agree(loops.gemm_rounds, rng(4).standard_normal((128, 256)).astype(np.float16),
          rng(5).standard_normal((256, 128)).astype(np.float16), 2,
          np.zeros((128, 128), np.float32), rtol=1e-3, atol=1e-2)
    agree(loops.first_above, np.abs(rng(6).standard_normal(256)).astype(np.float32), 10.0,
          np.zeros(2, np.int32))
    agree(loops.per_thread_while, rng(7).integers(0, 2**20, 128).astype(np.int32),
          np.zeros(128, np.int32))
    agree(loops.scaled_rows, rng(8).standard_normal((64, 32)).astype(np.float16),
          np.zeros((64, 32), np.float16))
    agree(loops.per_thread_vectors, rng(9).standard_normal(1024).astype(np.float16),
          np.zeros(1024, np.float16))
    agree(loops.drain, np.arange(64, dtype=np.float32) * 0.5, np.zeros(64, np.float32))
    agree(loops.strided_in_parallel, rng(10).standard_normal(256).astype(np.float32),
          np.zeros(16, np.float32))


@pytest.mark.parametrize("blocks", [3, 132])
def test_persistent(blocks):
    agree(persistent.owners(9, 13, blocks, 4), np.full((9, 13), -1, np.int32),
          np.zeros((9, 13), np.int32))
    M, N, K = 1000, 520, 256
    agree(persistent.persistent_gemm(M, N, K, blocks=blocks),
          rng(11).standard_normal((M, K)).astype(np.float16),
          rng(12).standard_normal((K, N)).astype(np.float16),
          np.full((M, N), np.nan, np.float32), rtol=2e-3, atol=2e-2)
