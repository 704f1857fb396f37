"""Elementwise kernels built with the tile-dialect Python builders.

    python examples/elementwise.py [--out DIR] [--arch sm_90a]

Builds `vadd` (C = A + B) and `scale_bias` (Y = X * 2 + bias[col]) as tile
IR through `tlc.dialects.tile`, compiles them to PTX, checks the PTX with
`ptxas` when it is on PATH, writes the PTX and launchable artifacts to DIR,
and, where a GPU and torch are present, runs vadd and checks it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

from tlc import ir
from tlc.dialects import arith, func, memref, tile

DTYPES = {"float32": ir.F32Type, "float16": ir.F16Type, "bfloat16": ir.BF16Type}


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _fragment(shape, elem) -> ir.MemRefType:
    return ir.MemRefType.get(shape, elem, memory_space=ir.Attribute.parse("#tile.space<fragment>"))


def _program(name: str, params: list[tuple[str, list[str]]], elem, body) -> ir.Module:
    """A func.func over dynamically sized row-major tensors; `body` builds its
    ops given the function's arguments."""
    module = ir.Module.create()
    dyn = ir.ShapedType.get_dynamic_size()
    types = [ir.MemRefType.get([dyn] * len(dims), elem) for _, dims in params]
    with ir.InsertionPoint(module.body):
        f = func.FuncOp(name, (types, []))
        f.arg_attrs = ir.ArrayAttr.get([
            ir.DictAttr.get({
                "tile.name": ir.StringAttr.get(pname),
                "tile.dims": ir.ArrayAttr.get([ir.StringAttr.get(d) for d in dims]),
            })
            for pname, dims in params
        ])
        entry = f.add_entry_block()
        with ir.InsertionPoint(entry):
            body(*entry.arguments)
            func.ReturnOp([])
    return module


def _kernel_2d(rows: ir.Value, cols: ir.Value, block: tuple[int, int], threads: int, body):
    """tile.kernel over ceildiv(cols, bn) x ceildiv(rows, bm) blocks."""
    bm, bn = block
    gx = arith.ceildivui(cols, _index(bn))
    gy = arith.ceildivui(rows, _index(bm))
    k = tile.KernelOp([gx, gy], threads)
    index = ir.IndexType.get()
    blk = k.body.blocks.append(index, index)
    with ir.InsertionPoint(blk):
        bx, by = blk.arguments
        body(arith.muli(by, _index(bm)), arith.muli(bx, _index(bn)))


def _copy(src, src_offsets, dst, dst_offsets, sizes):
    tile.copy(src, src_offsets, sizes, dst, dst_offsets, sizes)


def _parallel(shape, body):
    loop = tile.ParallelOp(shape)
    index = ir.IndexType.get()
    blk = loop.body.blocks.append(*([index] * len(shape)))
    with ir.InsertionPoint(blk):
        body(*blk.arguments)


def build_vadd(dtype: str = "float32", block=(32, 128), threads: int = 128) -> ir.Module:
    """C[M, N] = A + B, one (bm x bn) tile per block, in registers."""
    elem = DTYPES[dtype].get()

    def body(A, B, C):
        rows = memref.dim(A, _index(0))
        cols = memref.dim(A, _index(1))

        def kernel(i, j):
            zero = _index(0)
            a = tile.alloc_fragment(_fragment(list(block), elem))
            b = tile.alloc_fragment(_fragment(list(block), elem))
            _copy(A, [i, j], a, [zero, zero], list(block))
            _copy(B, [i, j], b, [zero, zero], list(block))

            def add(ii, jj):
                s = arith.addf(memref.load(a, [ii, jj]), memref.load(b, [ii, jj]))
                memref.store(s, a, [ii, jj])

            _parallel(list(block), add)
            _copy(a, [zero, zero], C, [i, j], list(block))

        _kernel_2d(rows, cols, block, threads, kernel)

    return _program("vadd", [("A", ["M", "N"]), ("B", ["M", "N"]), ("C", ["M", "N"])],
                    elem, body)


def build_scale_bias(dtype: str = "float32", block=(32, 128), threads: int = 128) -> ir.Module:
    """Y[M, N] = X * 2 + bias[col]: a fused epilogue reading a global vector."""
    elem = DTYPES[dtype].get()

    def body(X, bias, Y):
        rows = memref.dim(X, _index(0))
        cols = memref.dim(X, _index(1))

        def kernel(i, j):
            zero = _index(0)
            x = tile.alloc_fragment(_fragment(list(block), elem))
            _copy(X, [i, j], x, [zero, zero], list(block))
            two = arith.constant(elem, 2.0)

            def epilogue(ii, jj):
                col = arith.addi(j, jj)
                v = arith.mulf(memref.load(x, [ii, jj]), two)
                memref.store(arith.addf(v, memref.load(bias, [col])), x, [ii, jj])

            _parallel(list(block), epilogue)
            _copy(x, [zero, zero], Y, [i, j], list(block))

        _kernel_2d(rows, cols, block, threads, kernel)

    return _program("scale_bias", [("X", ["M", "N"]), ("bias", ["N"]), ("Y", ["M", "N"])],
                    elem, body)


def build_stream_rows(dtype: str = "float16", block=(32, 64), threads: int = 128) -> ir.Module:
    """Y[M, N] = X + 1, one block per bm rows walking the columns bn at a time:
    global -> shared -> registers -> global inside a tile.pipelined loop (the
    shared-memory path, its barriers, and masked edges at both ends)."""
    elem = DTYPES[dtype].get()
    bm, bn = block
    workgroup = ir.Attribute.parse("#gpu.address_space<workgroup>")

    def body(X, Y):
        rows = memref.dim(X, _index(0))
        cols = memref.dim(X, _index(1))
        k = tile.KernelOp([arith.ceildivui(rows, _index(bm))], threads)
        blk = k.body.blocks.append(ir.IndexType.get())
        with ir.InsertionPoint(blk):
            zero = _index(0)
            i = arith.muli(blk.arguments[0], _index(bm))
            s = tile.alloc_shared(ir.MemRefType.get([bm, bn], elem, memory_space=workgroup))
            x = tile.alloc_fragment(_fragment([bm, bn], elem))
            one = arith.constant(elem, 1.0)
            steps = arith.ceildivui(cols, _index(bn))
            loop = tile.PipelinedOp(zero, steps, _index(1), 2)
            step = loop.body.blocks.append(ir.IndexType.get())
            with ir.InsertionPoint(step):
                j = arith.muli(step.arguments[0], _index(bn))
                _copy(X, [i, j], s, [zero, zero], [bm, bn])
                _copy(s, [zero, zero], x, [zero, zero], [bm, bn])

                def inc(ii, jj):
                    memref.store(arith.addf(memref.load(x, [ii, jj]), one), x, [ii, jj])

                _parallel([bm, bn], inc)
                _copy(x, [zero, zero], Y, [i, j], [bm, bn])

    return _program("stream_rows", [("X", ["M", "N"]), ("Y", ["M", "N"])], elem, body)


def compile_to(module: ir.Module, out_dir: str, stem: str, arch: str) -> dict:
    """Compiles `module`, writes STEM.ptx and STEM.tlcart, returns the artifact."""
    from tlc import compiler, runtime

    artifact = compiler.compile_module(module, arch).artifact()
    with open(os.path.join(out_dir, stem + ".ptx"), "w") as f:
        f.write(artifact["ptx"])
    runtime.save_artifact(artifact, os.path.join(out_dir, stem + ".tlcart"))
    return artifact


def check_ptx(path: str, arch: str) -> bool:
    """Assembles the PTX with ptxas (when present) and reports spills."""
    ptxas = shutil.which("ptxas")
    if not ptxas:
        print(f"ptxas not found: {path} not assembled")
        return True
    r = subprocess.run([ptxas, f"-arch={arch}", "-v", path, "-o", os.devnull],
                       capture_output=True, text=True)
    info = [ln for ln in r.stderr.splitlines() if "registers" in ln or "spill" in ln]
    print(f"ptxas -arch={arch} {os.path.basename(path)}: "
          f"{'ok' if r.returncode == 0 else 'FAILED'}; " + " ".join(i.strip() for i in info))
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
    return r.returncode == 0


def run_on_gpu(artifact: dict) -> bool | None:
    """Runs vadd on the GPU against torch; None when there is no GPU."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    from tlc import runtime

    kernel = runtime.Kernel.from_dict(artifact)
    ok = True
    for m, n in [(4096, 4096), (1000, 1000)]:
        a = torch.randn(m, n, device="cuda")
        b = torch.randn(m, n, device="cuda")
        c = torch.full((m, n), float("nan"), device="cuda")
        kernel(a, b, c)
        torch.cuda.synchronize()
        err = (c - (a + b)).abs().max().item()
        good = err == 0.0
        ok &= good
        print(f"vadd {m}x{n} on {torch.cuda.get_device_name()}: max |err| = {err} "
              f"{'PASS' if good else 'FAIL'}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join("build", "examples"))
    ap.add_argument("--arch", default="sm_90a")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with ir.Context() as ctx, ir.Location.file(__file__, 1, 1):
        ctx.load_all_available_dialects()
        vadd = compile_to(build_vadd(), args.out, "vadd", args.arch)
        compile_to(build_scale_bias(), args.out, "scale_bias", args.arch)
    print(f"wrote {args.out}/vadd.ptx, vadd.tlcart, scale_bias.ptx, scale_bias.tlcart")
    ok = all(check_ptx(os.path.join(args.out, s + ".ptx"), args.arch)
             for s in ("vadd", "scale_bias"))
    ran = run_on_gpu(vadd)
    if ran is None:
        print("no GPU here (or no torch): compiled and assembled, not run")
    return 0 if ok and ran is not False else 1


if __name__ == "__main__":
    sys.exit(main())
