"""1-d vectors: vector.load, vector.extract, vector.from_elements and
vector.store, as T.c2d_im2col moves the image (a run of channels per load,
one per store into a shared tile).

A vector value is a numpy array whose last axis holds the vector's elements
(the axes before it are the lanes of a tile.parallel, if any). A vector.load
is not masked: on the GPU it reads all of its elements wherever they are, so
one reaching outside its buffer is an error here.
"""

from __future__ import annotations

import numpy as np

from .. import ir
from .program import handles


@handles("vector.load")
def _load(c, op):
    shape = ir.VectorType(op.result.type).shape
    if len(shape) != 1:
        raise c.site(op).error(f"the interpreter runs 1-d vector loads only, not "
                               f"{op.result.type}")
    width = shape[0]
    buf, out = c.slot(op.operands[0]), c.slot(op.result)
    indices = [c.slot(v) for v in list(op.operands)[1:]]
    site = c.site(op)

    def step(st):
        b = st.env[buf]
        at = [st.env[i] for i in indices]
        shape = np.broadcast_shapes(*[np.shape(x) for x in at])
        for dim, (i, n) in enumerate(zip(at, b.shape)):
            last = i + (width - 1 if dim == len(at) - 1 else 0)
            bad = np.broadcast_to((np.asarray(i) < 0) | (np.asarray(last) >= n), shape)
            if st.mask is not None:
                bad = bad & st.mask
            if bad.any():
                lane = tuple(np.argwhere(bad)[0]) if shape else ()
                where = [int(np.broadcast_to(x, shape)[lane]) for x in at]
                raise site.error(f"reads {width} elements from index {where} of "
                                 f"{b.describe()}, past the end of dimension {dim} (size "
                                 f"{n})", st.block)
        parts = [b.load(site, st, at[:-1] + [at[-1] + e]) for e in range(width)]
        st.env[out] = np.stack(np.broadcast_arrays(*parts), axis=-1)

    return step


@handles("vector.extract")
def _extract(c, op):
    if list(op.operands)[1:]:
        raise c.site(op).error("the interpreter runs vector.extract at constant positions only")
    (position,) = ir.DenseI64ArrayAttr(op.attributes["static_position"])
    src, out = c.slot(op.operands[0]), c.slot(op.result)

    def step(st):
        st.env[out] = st.env[src][..., position]

    return step


@handles("vector.from_elements")
def _from_elements(c, op):
    parts, out = [c.slot(v) for v in op.operands], c.slot(op.result)

    def step(st):
        st.env[out] = np.stack(np.broadcast_arrays(*[st.env[p] for p in parts]), axis=-1)

    return step


@handles("vector.store")
def _store(c, op):
    vtype = ir.VectorType(op.operands[0].type)
    if len(vtype.shape) != 1:
        raise c.site(op).error(f"the interpreter runs 1-d vector stores only, not {vtype}")
    width = vtype.shape[0]
    value, buf = c.slot(op.operands[0]), c.slot(op.operands[1])
    indices = [c.slot(v) for v in list(op.operands)[2:]]
    site = c.site(op)

    def step(st):
        b = st.env[buf]
        at = [st.env[i] for i in indices]
        v = st.env[value]
        for e in range(width):
            b.store(site, st, at[:-1] + [at[-1] + e], v[..., e])

    return step
