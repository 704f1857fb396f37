"""gpu.printf (T.print): the lines a kernel prints, printed by the interpreter.

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
        shape = np.broadcast_shapes(*(v.shape for v in values)) if values else ()
        values = [np.broadcast_to(v, shape) for v in values]
        mask = None if st.mask is None else np.broadcast_to(st.mask, shape)
        for index in np.ndindex(*shape):
            if mask is None or mask[index]:
                sys.stdout.write(fmt % tuple(v[index].item() for v in values))

    return step
