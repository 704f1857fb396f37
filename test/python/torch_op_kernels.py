"""Elementwise kernels that the torch-op tests (test_torch_op.py) and the GPU
check (test/gpu/torch_op_check.py) register as torch operators."""

import tlc.language as T

N = T.dynamic("N")
BLOCK = 128


@T.prim_func
def vadd(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
         C: T.Tensor((N,), "float32")):
    with T.Kernel(T.ceildiv(N, BLOCK), threads=128) as bx:
        for i in T.Parallel(BLOCK):
            C[bx * BLOCK + i] = A[bx * BLOCK + i] + B[bx * BLOCK + i]


@T.prim_func
def axpy(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"), alpha: T.float32):
    """Y += alpha * X, in place: the operator declares Y mutated."""
    with T.Kernel(T.ceildiv(N, BLOCK), threads=128) as bx:
        for i in T.Parallel(BLOCK):
            Y[bx * BLOCK + i] = Y[bx * BLOCK + i] + alpha * X[bx * BLOCK + i]


@T.prim_func
def vmul(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
         C: T.Tensor((N,), "float32")):
    with T.Kernel(T.ceildiv(N, BLOCK), threads=128) as bx:
        for i in T.Parallel(BLOCK):
            C[bx * BLOCK + i] = A[bx * BLOCK + i] * B[bx * BLOCK + i]


@T.prim_func
def vmul_grads(G: T.Tensor((N,), "float32"), A: T.Tensor((N,), "float32"),
               B: T.Tensor((N,), "float32"), dA: T.Tensor((N,), "float32"),
               dB: T.Tensor((N,), "float32")):
    """vmul's backward: dA = G * B, dB = G * A (two outputs)."""
    with T.Kernel(T.ceildiv(N, BLOCK), threads=128) as bx:
        for i in T.Parallel(BLOCK):
            dA[bx * BLOCK + i] = G[bx * BLOCK + i] * B[bx * BLOCK + i]
            dB[bx * BLOCK + i] = G[bx * BLOCK + i] * A[bx * BLOCK + i]
