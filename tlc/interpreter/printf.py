"""gpu.printf (T.print): the lines a kernel prints, printed by the interpreter; and the
checks T.device_assert (llvm.intr.trap) and T.assume (llvm.intr.assume) make.

Each lane that runs the op (each T.Parallel iteration, or each thread of a
kernel that reads the thread index; once per block in a kernel's own code
otherwise, where the GPU prints once per thread) prints one line, formatted
as C's printf would.
"""

from __future__ import annotations

import re
import sys

import numpy as np

from .. import ir
from .program import handles

_C_CONVERSION = re.compile(r"%(ll|l)?([dif])")


@handles("gpu.printf")
def _printf(c, op):
    fmt = _C_CONVERSION.sub(lambda m: "%" + m.group(2), ir.StringAttr(op.attributes["format"]).value)
    args = [c.slot(v) for v in op.operands]

    def step(st):
        values = [np.asarray(st.env[a]) for a in args]
        shapes = [v.shape for v in values] + ([np.shape(st.mask)] if st.mask is not None else [])
        shape = np.broadcast_shapes(*shapes) if shapes else ()  # a line per lane that runs it
        values = [np.broadcast_to(v, shape) for v in values]
        mask = None if st.mask is None else np.broadcast_to(st.mask, shape)
        for index in np.ndindex(*shape):
            if mask is None or mask[index]:
                sys.stdout.write(fmt % tuple(v[index].item() for v in values))

    return step


@handles("llvm.intr.trap")
def _trap(c, op):
    """T.device_assert's failure: an error at the assertion's line (the GPU traps)."""
    site = c.site(op)

    def step(st):
        if st.mask is None or np.any(st.mask):
            raise site.error("a device assertion failed", st.block)

    return step


@handles("llvm.intr.assume")
def _assume(c, op):
    """T.assume: checked where it runs (on the GPU a false one is undefined)."""
    site = c.site(op)
    cond = c.slot(op.operands[0])

    def step(st):
        held = np.asarray(st.env[cond])
        if st.mask is not None:
            held = held | ~np.broadcast_to(st.mask, np.broadcast_shapes(held.shape,
                                                                       np.shape(st.mask)))
        if not np.all(held):
            raise site.error("T.assume's condition is false here", st.block)

    return step
