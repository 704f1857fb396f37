#!/usr/bin/env python3
"""Run the multi-kernel artifacts of bench/build_multi_kernel.py on a GPU.

    TLC_RUNTIME_LIB=$PWD/.carry/libtlc_runtime.so python test/gpu/multi_kernel_check.py DIR

Each DIR/*.tlcart is a sequence of kernels with global scratch tensors
(format version 2); its "check" entry says which program it is. Every
check runs the artifact through tlc.runtime.load_artifact (no compiler) on
torch tensors whose outputs are poisoned with NaN, and compares with a
torch reference, in several ways of calling it:

- default: torch's current stream (scratch from torch's allocator);
- stream: a new torch.cuda.Stream passed as stream= (scratch allocated for it);
- again: a second call, outputs poisoned again (scratch reused or reallocated);
- driver: the tensors passed through __cuda_array_interface__ only, so
  the runtime allocates the scratch through the driver;
- graph: captured in a CUDA graph after a warm-up call, then replayed on
  new inputs;
- torch_op (split-K and decoding): registered with JITKernel.torch_op and
  called as a torch operator that allocates and returns the output.

Prints one line per check, "PASS ..." or "FAIL ...", then the count; exits
1 if any failed.
"""

import math
import sys
from pathlib import Path

import torch

try:
    import tlc.runtime as rt
except ImportError:  # run from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import tlc.runtime as rt


class CudaArray:
    """A tensor seen only through __cuda_array_interface__ (not as torch)."""

    def __init__(self, t: torch.Tensor):
        self.tensor = t
        self.__cuda_array_interface__ = t.__cuda_array_interface__


def poisoned(shape, dtype) -> torch.Tensor:
    return torch.full(shape, math.nan, dtype=dtype, device="cuda")


def run(kernel, inputs: list, outputs: list, how: str) -> None:
    """Calls `kernel` on inputs + outputs (writing the outputs) the way `how` says."""
    args = inputs + outputs
    if how in ("default", "again"):
        kernel(*args)
    elif how == "stream":
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # torch's current stream is s too
            kernel(*args, stream=s)
        torch.cuda.current_stream().wait_stream(s)
    elif how == "driver":
        kernel(*[CudaArray(a) if isinstance(a, torch.Tensor) else a for a in args])
    elif how == "graph":
        kernel(*args)  # warm-up: loads the modules, outside the capture
        torch.cuda.synchronize()
        static_in = [a.clone() for a in inputs]
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            kernel(*static_in, *outputs)
        for a, b in zip(static_in, inputs):
            b.copy_(torch.randn_like(b.float()).to(b.dtype))  # new inputs
            a.copy_(b)
        for o in outputs:
            o.fill_(math.nan)
        graph.replay()
    else:
        raise ValueError(how)
    torch.cuda.synchronize()


WAYS = ("default", "stream", "again", "driver", "graph")


def torch_op(kernel, name: str, n_out: int):
    """The sequence as a torch custom operator (JITKernel.torch_op), its last
    `n_out` parameters allocated and returned."""
    import tlc

    n = len(kernel.params)
    jit_kernel = tlc.JITKernel(kernel.to_dict(), {}, out_idx=list(range(n - n_out, n)))
    return jit_kernel.torch_op(f"tlc_multi_check::{name}")


def check_reverse(kernel, check: dict, report) -> None:
    for n in check["sizes"]:
        for how in WAYS:
            a = torch.randn(n, device="cuda")
            b = poisoned((n,), torch.float32)
            run(kernel, [a], [b], how)
            report(f"N={n} {how}", b, 2 * a.flip(0) + a, 1e-6, 1e-6)


def check_splitk(kernel, check: dict, report) -> None:
    m, n, k = check["M"], check["N"], check["K"]
    for how in WAYS:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = poisoned((m, n), torch.float16)
        run(kernel, [a, b], [c], how)
        report(how, c, a.float() @ b.float(), 0.1, 1e-2)
    op = torch_op(kernel, kernel.name + f"_{m}x{n}x{k}", 1)
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    report("torch_op", op(a, b), a.float() @ b.float(), 0.1, 1e-2)


def decoding_reference(q, k, v) -> torch.Tensor:
    p = torch.softmax(q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
    return p @ v.float()


def check_decode(kernel, check: dict, report) -> None:
    h, s, d = check["heads"], check["seq"], check["dim"]
    for batch in check["batches"]:
        for how in WAYS:
            q = torch.randn(batch, h, d, device="cuda", dtype=torch.float16)
            k = torch.randn(batch, s, d, device="cuda", dtype=torch.float16)
            v = torch.randn(batch, s, d, device="cuda", dtype=torch.float16)
            o = poisoned((batch, h, d), torch.float16)
            run(kernel, [q, k, v], [o], how)
            report(f"batch={batch} {how}", o, decoding_reference(q, k, v), 1e-2, 1e-2)
    op = torch_op(kernel, f"{kernel.name}_h{h}_s{s}_d{d}", 1)
    q = torch.randn(2, h, d, device="cuda", dtype=torch.float16)
    k = torch.randn(2, s, d, device="cuda", dtype=torch.float16)
    v = torch.randn(2, s, d, device="cuda", dtype=torch.float16)
    report("torch_op", op(q, k, v), decoding_reference(q, k, v), 1e-2, 1e-2)


def check_conv_view(kernel, check: dict, report) -> None:
    n, c, h, w, f, k, s, d, p = check["shape"]
    oh = (h + 2 * p - d * (k - 1) - 1) // s + 1
    ow = (w + 2 * p - d * (k - 1) - 1) // s + 1

    def reference(x, wt):
        y = torch.nn.functional.conv2d(x.float().permute(0, 3, 1, 2),
                                       wt.float().permute(3, 2, 0, 1), stride=s, padding=p,
                                       dilation=d)
        return y.permute(0, 2, 3, 1)

    for how in WAYS:
        x = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16)
        wt = torch.randn(k, k, c, f, device="cuda", dtype=torch.float16)
        o = poisoned((n, oh, ow, f), torch.float16)
        run(kernel, [x, wt], [o], how)
        report(how, o, reference(x, wt), 0.15, 1e-2)
    op = torch_op(kernel, f"{kernel.name}_{kernel.target}_{'x'.join(map(str, check['shape']))}",
                  1)
    x = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16)
    wt = torch.randn(k, k, c, f, device="cuda", dtype=torch.float16)
    report("torch_op", op(x, wt), reference(x, wt), 0.15, 1e-2)


CHECKS = {"reverse": check_reverse, "splitk": check_splitk, "decode": check_decode,
          "conv_view": check_conv_view}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    results = []
    for path in sorted(Path(argv[0]).glob("*.tlcart")):
        kernel = rt.load_artifact(path)
        check = kernel.metadata.get("check")
        if not isinstance(kernel, rt.KernelSequence) or check is None:
            continue

        def report(what, got, want, atol, rtol, name=path.stem):
            got = got.float()
            bad = torch.isnan(got).any().item() or not torch.allclose(got, want, atol=atol,
                                                                        rtol=rtol)
            err = (got - want).abs().nan_to_num(math.inf).max().item()
            results.append(not bad)
            print(f"{'FAIL' if bad else 'PASS'} {name} {what} max_abs_err={err:.3g}", flush=True)

        try:
            torch.manual_seed(0)
            CHECKS[check["kind"]](kernel, check, report)
        except Exception as e:  # noqa: BLE001 - one failing artifact must not hide the rest
            results.append(False)
            print(f"FAIL {path.stem} raised {type(e).__name__}: {e}", flush=True)
    passed = sum(results)
    print(f"{passed}/{len(results)} checks passed")
    return 0 if results and passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
