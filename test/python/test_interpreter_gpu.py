"""On a GPU: the interpreted and the compiled kernel agree on the same inputs,
family by family (run by hand on the H200; skipped where there is no GPU).

The interpreter gets torch CPU tensors (the GPU inputs copied), so this also
exercises its torch path. Tolerances: elementwise fp32 exact; where the
GPU sums in another order (gemm, reductions), a few ulps of the output dtype.
"""

import importlib.util

import pytest

import tlc
from tlc.frontend.tile_file import load_tile_file

pytestmark = pytest.mark.gpu


def example(repo, name):
    spec = importlib.util.spec_from_file_location(f"gpu_example_{name}",
                                                  repo / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def both(factory, *args, out_idx=(-1,), **kwargs):
    """(compiled kernel, interpreted kernel) of one factory call."""
    compiled = tlc.jit(factory, out_idx=list(out_idx), interpret=False)(*args, **kwargs)
    interpreted = tlc.jit(factory, out_idx=list(out_idx), interpret=True)(*args, **kwargs)
    return compiled, interpreted


def agree(compiled, interpreted, inputs, rtol, atol):
    import torch

    gpu = compiled(*inputs)
    cpu = interpreted(*[t.cpu() for t in inputs])
    torch.cuda.synchronize()
    torch.testing.assert_close(cpu, gpu.cpu(), rtol=rtol, atol=atol)


def test_elementwise(repo):
    import torch

    kernels = load_tile_file(str(repo / "examples/elementwise.tile"))
    a, b = (torch.randn(1000, 1000, device="cuda") for _ in range(2))
    c_gpu = torch.full_like(a, float("nan"))
    tlc.compile(kernels["vadd"])(a, b, c_gpu)
    c_cpu = torch.full((1000, 1000), float("nan"))
    tlc.interpret(kernels["vadd"], a.cpu(), b.cpu(), c_cpu)
    torch.cuda.synchronize()
    assert torch.equal(c_cpu, c_gpu.cpu())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["NN", "NT", "TN"])
def test_gemm(repo, layout, dtype):
    import torch

    ex = example(repo, "gemm")
    M, N, K = 1000, 520, 264
    ta, tb = layout[0] == "T", layout[1] == "T"
    compiled, interpreted = both(ex.matmul.factory, M, N, K, dtype=dtype, trans_A=ta,
                                 trans_B=tb)
    t = getattr(torch, dtype)
    a = torch.randn(*((K, M) if ta else (M, K)), device="cuda", dtype=t)
    b = torch.randn(*((N, K) if tb else (K, N)), device="cuda", dtype=t)
    eps = 2 ** -10 if dtype == "float16" else 2 ** -7
    agree(compiled, interpreted, [a, b], rtol=2 * eps, atol=1e-2)


def test_softmax_and_rowmax(repo):
    import torch

    ex = example(repo, "softmax")
    agree(*both(ex.softmax.factory, 1000, 1024), [torch.randn(1000, 1024, device="cuda")],
          rtol=1e-5, atol=1e-7)
    a = torch.randn(1000, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 512, device="cuda", dtype=torch.float16)
    agree(*both(ex.rowmax_of_product.factory, 1000, 512, 256), [a, b], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("scale", [None, 0.5])
def test_chained_gemm(repo, scale):
    import torch

    ex = example(repo, "chained_gemm")
    inputs = [torch.randn(*s, device="cuda", dtype=torch.float16)
              for s in [(1000, 64), (64, 64), (64, 64)]]
    agree(*both(ex.chained.factory, 1000, 64, 64, 64, scale=scale), inputs, rtol=2e-3,
          atol=2e-2)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dim", [64, 128])
def test_attention(repo, causal, dim):
    import torch

    ex = example(repo, "attention")
    q, k, v = (torch.randn(1, 512, 2, dim, device="cuda", dtype=torch.float16)
               for _ in range(3))
    agree(*both(ex.attention.factory, 1, 2, 512, dim, causal, out_idx=(3,)), [q, k, v],
          rtol=2e-3, atol=2e-3)
