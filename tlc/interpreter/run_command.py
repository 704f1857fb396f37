"""`tlc run FILE --kernel NAME ...`: interpret a kernel on random inputs and
print what it wrote.

    tlc run examples/elementwise.tile --kernel vadd --size M=100 --size N=300
    tlc run examples/gemm.tile --size M=256 -D N=128 -D K=64 --block 0,1 --save out.npz

Every tensor gets random values (seeded): floats standard normal, integers
in [-8, 8), booleans fair coins; sizes the program leaves symbolic come from
--size, scalar parameters from --arg. Exit status 0, 1 on an error in the
program or its inputs (message with file:line:col), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time

import numpy as np

from ..errors import CompilationError
from .errors import InterpreterError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tlc run", description=(
        "Interpret a kernel (.tile or tile-dialect .mlir) on the CPU with random inputs "
        "and print a summary of the tensors it writes."))
    p.add_argument("input", help="a .tile or .mlir file")
    p.add_argument("--kernel", default=None, help="the kernel to run when there are several")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="set a .tile file's compile-time constant")
    p.add_argument("--size", action="append", default=[], metavar="NAME=N",
                   help="the value of a symbolic size (T.dynamic) of the tensors")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="the value of a scalar parameter")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--block", action="append", default=None, metavar="BX[,BY[,BZ]]",
                   help="run only this block (repeatable; default: the whole grid)")
    p.add_argument("--save", default=None, metavar="FILE.npz",
                   help="write every tensor after the run to FILE.npz")
    return p


def _pairs(items, what: str, parser) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            parser.error(f"{what} expects NAME=VALUE, got '{item}'")
        try:
            out[name.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            parser.error(f"{what} {name}: '{value}' is not a number")
    return out


def _program(args, parser):
    from . import program

    if args.input.endswith(".tile"):
        from ..frontend.tile_file import load_tile_file, parse_define

        kernels = load_tile_file(args.input, dict(parse_define(d) for d in args.defines))
        if args.kernel is None and len(kernels) > 1:
            raise CompilationError(f"{args.input} has {len(kernels)} kernels "
                                   f"({', '.join(kernels)}): choose one with --kernel")
        if args.kernel is not None and args.kernel not in kernels:
            raise CompilationError(f"no kernel named '{args.kernel}' in {args.input} "
                                   f"(kernels: {', '.join(kernels)})")
        return program(kernels[args.kernel or next(iter(kernels))])
    if args.defines:
        parser.error("-D sets constants of .tile files; a .mlir file has none")
    import pathlib

    return program(pathlib.Path(args.input), args.kernel)


def _inputs(prog, sizes: dict, scalars: dict, seed: int) -> list:
    rng = np.random.default_rng(seed)
    used_sizes, values = set(), []
    for p in prog.params:
        if p.kind == "scalar":
            if p.name not in scalars:
                raise CompilationError(f"{prog.name}'s scalar parameter '{p.name}' needs a "
                                       f"value: --arg {p.name}=...")
            values.append(scalars.pop(p.name))
            continue
        shape = []
        for dim, d in enumerate(p.shape):
            if isinstance(d, int):
                shape.append(d)
            elif d is not None and d in sizes:
                used_sizes.add(d)
                shape.append(sizes[d])
            elif d is not None:
                raise CompilationError(f"size {d} of '{p.name}' is not known before the run: "
                                       f"give it with --size {d}=N")
            else:
                raise CompilationError(f"dimension {dim} of '{p.name}' is dynamic and has no "
                                       "size name to give with --size (name it in the "
                                       "parameter's tile.dims)")
        values.append(_random(rng, p.dtype, shape))
    unused = [n for n in sizes if n not in used_sizes] + list(scalars)
    if unused:
        raise CompilationError(f"{prog.name} has no size or scalar parameter named "
                               f"{', '.join(unused)}")
    return values


def _random(rng, dtype: str, shape):
    if dtype in ("float16", "float32", "float64"):
        return rng.standard_normal(shape).astype(dtype)
    if dtype in ("bfloat16", "float8_e4m3", "float8_e5m2"):
        return rng.standard_normal(shape).astype(np.float32)  # rounded to dtype when bound
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("uint"):
        return rng.integers(0, 16, shape).astype(dtype)
    return rng.integers(-8, 8, shape).astype(dtype)


def _summary(name: str, array: np.ndarray, dtype: str) -> str:
    a = array.astype(np.float64)
    finite = a[np.isfinite(a)]
    stats = (f"min {finite.min():.6g}  max {finite.max():.6g}  mean {finite.mean():.6g}"
             if finite.size else "no finite values")
    bad = a.size - finite.size
    return (f"  {name}: {'x'.join(map(str, array.shape))} {dtype}  {stats}"
            + (f"  ({bad} NaN/inf)" if bad else ""))


def _save(path: str, arrays: dict) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tlc-", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    sizes = _pairs(args.size, "--size", parser)
    scalars = _pairs(args.arg, "--arg", parser)
    blocks = None
    if args.block is not None:
        try:
            blocks = [tuple(int(x) for x in b.split(",")) for b in args.block]
        except ValueError:
            parser.error(f"--block expects BX[,BY[,BZ]] integers, got {args.block}")
    for name, n in sizes.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            parser.error(f"--size {name}: expected a non-negative integer, got {n!r}")
    from ..runtime.errors import ArgumentError

    try:
        prog = _program(args, parser)
        values = _inputs(prog, sizes, scalars, args.seed)
        start = time.perf_counter()
        written = prog.run(values, blocks)
        seconds = time.perf_counter() - start
        tensors = {p.name: v for p, v in zip(prog.params, values) if p.kind == "tensor"}
        if args.save:
            _save(args.save, tensors)
    except (CompilationError, InterpreterError, ArgumentError) as e:
        print(e, file=sys.stderr)
        return 1
    except OSError as e:
        print(f"tlc run: error: {e}", file=sys.stderr)
        return 1
    ran = "the whole grid" if blocks is None else f"blocks {', '.join(map(str, blocks))}"
    print(f"interpreted {prog.name} ({ran}, seed {args.seed}) in {seconds:.2f} s")
    dtypes = {p.name: p.dtype for p in prog.params}
    if not written:
        print("  it wrote no tensor")
    for name in written:
        print(_summary(name, tensors[name], dtypes[name]))
    if args.save:
        print(f"wrote {args.save}")
    return 0
