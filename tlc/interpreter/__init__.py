"""Run tile programs on the CPU with numpy: for debugging, and for checking
numerics where there is no GPU.

    tlc.interpret(prim_func, a, b, c)                  # every block, in place
    tlc.interpret(prim_func, a, b, c, blocks=[(0, 0)]) # some blocks
    @tlc.jit(out_idx=[-1], interpret=True)             # or TLC_INTERPRET=1

The tile IR the frontend builds (also from .tile and tile-dialect .mlir
files) is decoded once into Python steps; each tile op then runs on whole
numpy arrays, a `T.Parallel` body once over its whole iteration space, the
grid's blocks one after another. Storage types are modelled (float16 native,
bfloat16 and float8 rounded on every value), gemms accumulate in their
accumulator type. Accesses outside a buffer (tensors outside the masking
that copies and T.Parallel define), and reads of on-chip buffers that no op
of the block wrote, raise InterpreterError at the op's source line.
"""

from __future__ import annotations

from .errors import InterpreterError
from .kernel import InterpretedFactory, InterpretedKernel


def interpret(source, *args, blocks=None, kernel: str | None = None) -> None:
    """Runs a tile program on `args` (numpy arrays, torch tensors, Python
    scalars: one per parameter), writing its outputs in place.

    `source` is a @T.prim_func, a tile-IR module, tile-IR text, or the path
    (a pathlib.Path) of a .tile or .mlir file; `kernel` names the kernel when
    there are several. `blocks` runs only those blocks of the grid (tuples of
    block indices, e.g. [(0, 0), (3, 1)]); blocks are named by the indices the
    program sees (bx, by, ...), whatever order T.use_swizzle gives them on the
    GPU, where blocks are independent anyway."""
    program(source, kernel).run(args, blocks)


def program(source, kernel: str | None = None):
    """The decoded Program of a prim_func, module, IR text or file (see interpret)."""
    import os

    from .launch import Program

    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        if path.endswith(".tile"):
            from ..frontend.tile_file import load_tile_file

            kernels = load_tile_file(path)
            if kernel is None and len(kernels) > 1:
                raise InterpreterError(f"{path} has {len(kernels)} kernels "
                                       f"({', '.join(kernels)}): choose one with kernel=")
            if kernel is not None and kernel not in kernels:
                raise InterpreterError(f"no kernel named '{kernel}' in {path} "
                                       f"(kernels: {', '.join(kernels)})")
            source = kernels[kernel or next(iter(kernels))]
        else:
            from ..compiler.pipeline import new_context, parse

            with open(path) as f:
                source = parse(f.read(), new_context(), path)
    if hasattr(source, "build_module"):  # a @T.prim_func
        return Program(source.build_module(), kernel or source.name)
    if isinstance(source, str):
        from ..compiler.pipeline import new_context, parse

        source = parse(source, new_context())
    from .. import ir

    if not isinstance(source, ir.Module):
        hint = " (a compiled kernel: interpret its @T.prim_func, or kernel.get_mlir('tile'))" \
            if hasattr(source, "get_mlir") else ""
        raise TypeError(f"tlc.interpret takes a @T.prim_func, a tile-IR module, IR text or a "
                        f"path, got {type(source).__name__}{hint}")
    return Program(source, kernel)


__all__ = ["InterpretedFactory", "InterpretedKernel", "InterpreterError", "interpret"]
