#!/usr/bin/env python3
"""Run tlc kernel artifacts on a GPU and check them against torch.

    python test/gpu/run_artifacts.py DIR [--bench] [--lib PATH]

Needs torch with CUDA and libtlc_runtime.so (beside tlc/runtime/driver.py, or
named by --lib / TLC_RUNTIME_LIB); nothing is compiled. Every DIR/*.tlcart
whose metadata has a "check" entry takes part:

    "check": {
      "symbols": {"M": 1000, "N": 4096},   value of every shape symbol
      "scalars": {"alpha": 0.5},           value of every scalar parameter
      "expect": {"C": "A + alpha * B"},    torch expression per checked output
      "inputs": {"I": "randint(0, 7)"},    optional initialisation per input
      "modules": {"ref": "examples/x.py"}, optional: modules (paths from the checkout's
                                           root) the expressions may call by name
      "atol": 1e-5, "rtol": 1e-5,          optional; else torch.testing's defaults
      "seed": 0,                           optional
      "bench_symbols": {"N": 67108864}     optional sizes for --bench
    }

Tensors with access "read" or "readwrite" are inputs. Their initialisation
is one of randn, rand, randint(lo, hi), zeros, ones, arange, a number, or a
list of the tensor's values (row-major: sequence offsets, say); the default
is randn for floats, randint(-100, 100) for signed ints, randint(0, 200) for
uint8 and random bits for bool. "write" tensors are
poisoned first (NaN for floats, 0x7f bytes otherwise), so an element the
kernel does not write is caught.

An "expect" expression is Python evaluated with torch, math, the "modules"
and the arguments by name (tensors as they were before the launch); only run
artifacts you trust. Its value is compared with the tensor after the launch.

Prints one line per artifact, "PASS name max_abs_err=..." or "FAIL name ...",
and with --bench "BENCH name ... GB/s=..." for the passing ones, where the
bytes are those of all tensor parameters (readwrite ones twice) and the time
is the median of 50 launches after 10 warm-up ones (queued behind a spin
kernel so that the host's launch overhead is not timed), rotating among 4
argument sets when one set is under 200 MB so that L2 does not serve them.
Exits 1 if any artifact failed.
"""

import argparse
import importlib.util
import math
import os
import re
import statistics
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]  # the checkout
try:
    import tlc.runtime as rt
except ImportError:  # run from a checkout: python test/gpu/run_artifacts.py
    sys.path.insert(0, str(ROOT))
    import tlc.runtime as rt

# torch.testing.assert_close's defaults: (atol, rtol).
TOLERANCES = {
    torch.float16: (1e-5, 1e-3),
    torch.bfloat16: (1e-5, 1.6e-2),
    torch.float32: (1e-5, 1.3e-6),
    torch.float64: (1e-7, 1e-7),
}
WARMUP, TIMED, SETS, ROTATE_BELOW = 10, 50, 4, 200e6
SPIN_CYCLES = 100_000_000  # about 50 ms: far longer than queueing TIMED launches


class CheckError(Exception):
    """The artifact's check entry is incomplete or wrong."""


def make_tensor(spec, shape, dtype: torch.dtype) -> torch.Tensor:
    kw = {"device": "cuda"}
    if spec is None:
        if dtype.is_floating_point:
            spec = "randn"
        elif dtype == torch.bool:
            return torch.rand(shape, **kw) < 0.5
        else:
            spec = "randint(0, 200)" if dtype == torch.uint8 else "randint(-100, 100)"
    if isinstance(spec, (int, float)):
        return torch.full(shape, spec, dtype=dtype, **kw)
    if isinstance(spec, list):
        values = torch.tensor(spec, dtype=dtype, **kw)
        if values.numel() != math.prod(shape):
            raise CheckError(f"{len(spec)} values for a tensor of shape {list(shape)}")
        return values.reshape(shape)
    if spec in ("randn", "rand"):
        return getattr(torch, spec)(shape, **kw).to(dtype)
    if spec in ("zeros", "ones"):
        return getattr(torch, spec)(shape, dtype=dtype, **kw)
    if spec == "arange":
        return torch.arange(math.prod(shape), **kw).reshape(shape).to(dtype)
    m = re.fullmatch(r"randint\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)", str(spec))
    if m:
        return torch.randint(int(m[1]), int(m[2]), shape, **kw).to(dtype)
    raise CheckError(f"unknown initialisation {spec!r}")


def poison(t: torch.Tensor) -> None:
    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    else:
        t.view(torch.uint8).fill_(0x7F)


def make_args(k: rt.Kernel, check: dict, symbols: dict) -> dict:
    """One value per parameter, by name."""
    values = {}
    for p in k.params:
        if p.kind == "scalar":
            if p.name not in check.get("scalars", {}):
                raise CheckError(f"check.scalars lacks {p.name!r}")
            values[p.name] = check["scalars"][p.name]
            continue
        try:
            # a size may be an expression of the symbols: "(seq * 32)"
            shape = [d if isinstance(d, int) else rt.GridExpr(d)(symbols) for d in p.shape]
        except KeyError as e:
            raise CheckError(f"no value for shape symbol {e} in the check entry") from None
        dtype = getattr(torch, p.dtype)
        if p.access == "write":
            t = torch.empty(shape, dtype=dtype, device="cuda")
            poison(t)
        else:
            t = make_tensor(check.get("inputs", {}).get(p.name), shape, dtype)
        values[p.name] = t
    return values


def load_modules(check: dict) -> dict:
    """The check's "modules", by name: Python files of the checkout (trusted, as the
    expressions are)."""
    modules = {}
    for name, path in check.get("modules", {}).items():
        spec = importlib.util.spec_from_file_location(f"check_{name}", ROOT / path)
        if spec is None:
            raise CheckError(f"check.modules: cannot load {path!r}")
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    return modules


def compare(name: str, out: torch.Tensor, ref, check: dict) -> tuple[float, str]:
    """(max_abs_err, what is wrong or "") for one output against its reference."""
    ref = torch.as_tensor(ref, device=out.device)
    if ref.shape != out.shape:
        try:
            ref = ref.expand(out.shape)
        except RuntimeError:
            return math.inf, f"{name}: reference shape {tuple(ref.shape)} != {tuple(out.shape)}"
    if out.dtype.is_floating_point:
        atol, rtol = TOLERANCES.get(out.dtype, (1e-5, 1e-5))
        atol, rtol = check.get("atol", atol), check.get("rtol", rtol)
        o, r = out.double(), ref.double()
        ok = torch.isclose(o, r, atol=atol, rtol=rtol, equal_nan=True)
        err = (o - r).abs().nan_to_num(nan=math.inf)
        err[torch.isnan(o) & torch.isnan(r)] = 0
    else:
        if out.dtype == torch.bool:  # compare the bytes: poison is neither 0 nor 1
            o, r = out.view(torch.uint8).long(), ref.to(torch.bool).long()
        else:
            o, r = out.long(), ref.to(out.dtype).long()
        err = (o - r).abs().double()
        ok = err <= check.get("atol", 0)
    max_err = err.max().item() if err.numel() else 0.0
    bad = int((~ok).sum())
    if not bad:
        return max_err, ""
    first = tuple(int(i) for i in (~ok).nonzero()[0])
    return max_err, (f"{name}: {bad}/{ok.numel()} mismatches, first at {first}: "
                     f"got {out[first].item()} expected {ref[first].item()}")


def check_artifact(k: rt.Kernel) -> tuple[bool, str]:
    check = k.metadata["check"]
    torch.manual_seed(check.get("seed", 0))
    values = make_args(k, check, check.get("symbols", {}))
    before = {n: v.clone() if isinstance(v, torch.Tensor) else v for n, v in values.items()}
    k(*(values[p.name] for p in k.params))
    torch.cuda.synchronize()
    expect = check.get("expect")
    if not expect:
        raise CheckError("check.expect names no output")
    worst, problems = 0.0, []
    modules = load_modules(check)
    for name, expr in expect.items():
        if name not in values:
            raise CheckError(f"check.expect names {name!r}, which is not a parameter")
        env = dict(before, torch=torch, math=math, **modules)
        ref = eval(expr, {"__builtins__": {}}, env)  # trusted test artifacts only
        err, problem = compare(name, values[name], ref, check)
        worst = max(worst, err)
        problems += [problem] if problem else []
    return not problems, " ".join([f"max_abs_err={worst:.3g}", *problems])


def bench_artifact(k: rt.Kernel) -> str:
    check = k.metadata["check"]
    symbols = check.get("bench_symbols") or check.get("symbols", {})
    first = make_args(k, check, symbols)
    nbytes = 0
    for p in k.params:
        if p.kind == "tensor":
            t = first[p.name]
            nbytes += t.numel() * t.element_size() * (2 if p.access == "readwrite" else 1)
    sets = [first] + [make_args(k, check, symbols)
                      for _ in range(SETS - 1 if nbytes < ROTATE_BELOW else 0)]
    calls = [[s[p.name] for p in k.params] for s in sets]
    for i in range(WARMUP):
        k(*calls[i % len(calls)])
    torch.cuda.synchronize()
    # All launches queued back to back, each between its own pair of events,
    # behind a spin kernel that keeps the GPU busy while the host queues them:
    # otherwise a short kernel's time would be the host's launch overhead.
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(TIMED)]
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(SPIN_CYCLES)
    for i, (start, end) in enumerate(events):
        start.record()
        k(*calls[i % len(calls)])
        end.record()
    torch.cuda.synchronize()
    ms = statistics.median(s.elapsed_time(e) for s, e in events)
    sizes = ",".join(f"{n}={v}" for n, v in symbols.items())
    return (f"{sizes} sets={len(sets)} bytes={nbytes} "
            f"time_us={ms * 1e3:.1f} GB/s={nbytes / (ms * 1e-3) / 1e9:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--bench", action="store_true", help="also time the passing artifacts")
    parser.add_argument("--lib", help="path of libtlc_runtime.so (sets TLC_RUNTIME_LIB)")
    opts = parser.parse_args()
    if opts.lib:
        os.environ["TLC_RUNTIME_LIB"] = opts.lib
    if not torch.cuda.is_available():
        print("no CUDA device visible to torch", file=sys.stderr)
        return 1
    passed = failed = 0
    for path in sorted(opts.dir.glob(f"*{rt.SUFFIX}")):
        try:
            k = rt.load_artifact(path)
        except (rt.ArtifactError, OSError) as e:
            print(f"FAIL {path.name} cannot load: {e}")
            failed += 1
            continue
        if "check" not in k.metadata:
            continue
        # Named by file, which tells apart several artifacts of one kernel.
        name = path.stem if path.stem == k.name else f"{path.stem}[{k.name}]"
        try:
            ok, detail = check_artifact(k)
        except Exception as e:  # noqa: BLE001 -- one broken artifact must not hide the others
            ok, detail = False, f"{type(e).__name__}: {e}"
        print(f"{'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)
        passed, failed = passed + ok, failed + (not ok)
        if ok and opts.bench:
            try:
                print(f"BENCH {name} {bench_artifact(k)}", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"FAIL {name} bench: {type(e).__name__}: {e}", flush=True)
                failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
