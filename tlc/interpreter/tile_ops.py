"""Buffers and tile ops: tile.alloc_*, tile.stage, tile.view, tile.copy, tile.transpose, tile.fill,
tile.gemm, tile.reduce, and memref.load / store / dim.

Each tile op runs on whole numpy arrays; on-chip buffers are fresh per block
and carry a written-mask, so reading an element nothing wrote is an error.
"""

from __future__ import annotations

import numpy as np

from .. import ir
from ..frontend.atomics import TMA_REDUCE_ADD
from .buffers import Buffer
from .numerics import convert, round_tf32
from . import private, races
from .async_copies import complete_async_groups
from .program import handles

_SPACES = {"#gpu.address_space<workgroup>": "shared", "#tile.space<fragment>": "fragment",
           "#tile.space<local>": "local"}


def memref_space(t) -> str:
    space = ir.MemRefType(t).memory_space
    return "global" if space is None else _SPACES.get(str(space), str(space))


@handles("tile.alloc_shared", "tile.alloc_fragment", "tile.alloc_local")
def _alloc(c, op):
    out = c.slot(op.result)
    t = ir.MemRefType(op.result.type)
    etype, shape = c.etype(op, t.element_type), tuple(t.shape)
    space, name = op.operation.name.split("_")[-1], c.buffer_name(op)

    def step(st):
        st.env[out] = Buffer.allocate(name, space, etype, shape)

    return step


@handles("tile.stage")
def _stage(c, op):
    src, index, out = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.result)
    site = c.site(op)

    def step(st):
        buf, i = st.env[src], st.env[index]
        if np.ndim(i):  # a thread's own access (lanes): one stage for all of them
            flat = np.ravel(i)
            if (flat != flat[0]).any():
                raise site.error("the threads name different stages of "
                                 f"{buf.describe()} at once here", st.block)
            i = flat[0]
        i = int(i)
        if not 0 <= i < buf.shape[0]:
            raise site.error(f"stage {i} of {buf.describe()} is out of range", st.block)
        st.env[out] = buf.view(i)

    return step


@handles("tile.make_tensor")
def _make_tensor(c, op):
    site = c.site(op)

    def step(st):
        raise site.error("T.make_tensor addresses device memory by a pointer read at run time; "
                         "the interpreter has no device memory to look the address up in (run "
                         "the compiled kernel)", st.block)

    return step


@handles("tile.view")
def _view(c, op):
    src, out = c.slot(op.operands[0]), c.slot(op.result)
    t = ir.MemRefType(op.result.type)
    etype, shape = c.etype(op, t.element_type), tuple(t.shape)

    site = c.site(op)

    def step(st):
        buf = st.env[src]
        if etype.dtype != buf.etype.dtype and not (etype.holds_bytes and buf.etype.holds_bytes):
            raise site.error(f"the interpreter cannot view the bytes of {buf.describe()} as "
                             f"{etype.describe()} (it holds {buf.etype.describe()} and "
                             f"{etype.describe()} values in wider numpy types); the "
                             "compiled kernel can", st.block)
        st.env[out] = buf.reinterpret(etype, shape)

    return step


def _view_shape(st, buf, axes):
    """The shape that lays `buf` over the running tile.parallel's iteration space
    when it is indexed by the loop's own variables (`axes`), else None."""
    if axes is None or st.mask is not None or buf.space == "global":
        return None
    shape = st.parallel_shape
    if buf.shape != tuple(shape[d] for d in axes):
        return None
    return [shape[d] if d in axes else 1 for d in range(len(shape))]


@handles("memref.load")
def _load(c, op):
    buf, out = c.slot(op.operands[0]), c.slot(op.result)
    operands = list(op.operands)[1:]
    indices = [c.slot(v) for v in operands]
    axes = c.parallel_axes(operands)
    site = c.site(op)

    def step(st):
        env = st.env
        b = env[buf]
        if b.space == "local" and st.lanes:
            env[out] = private.load(site, st, b, [env[i] for i in indices])
            return
        view = _view_shape(st, b, axes)
        if view is not None and b.written.all():  # f[i, j], m[i]: no gather needed
            races.note(b, None, False, site, st.block)
            env[out] = b.data.reshape(view).copy()
        else:
            env[out] = b.load(site, st, [env[i] for i in indices])

    return step


@handles("memref.store")
def _store(c, op):
    value, buf = c.slot(op.operands[0]), c.slot(op.operands[1])
    operands = list(op.operands)[2:]
    indices = [c.slot(v) for v in operands]
    axes = c.parallel_axes(operands)
    full = axes is not None and len(axes) == len(c.parallel_dims)
    site = c.site(op)

    def step(st):
        env = st.env
        b = env[buf]
        if b.space == "local" and st.lanes:
            private.store(site, st, b, [env[i] for i in indices], env[value])
            return
        if full and _view_shape(st, b, axes) is not None:  # f[i, j] = ...: every element
            races.note(b, None, True, site, st.block)
            b.data[...] = env[value]
            b.written[...] = True
        else:
            b.store(site, st, [env[i] for i in indices], env[value])

    return step


# arith::AtomicRMWKind -> how lanes combine into an element: T.atomic_add's
# adds, and the max/min updates of a T.alloc_reducer's partials.
_ATOMIC_KINDS = {0: "add", 1: "add", 3: "assign", 4: "max", 6: "max", 7: "max", 8: "min",
                 10: "min", 11: "min"}


@handles("memref.atomic_rmw")
def _atomic_rmw(c, op):
    kind = op.attributes["kind"]
    combine = _ATOMIC_KINDS.get(ir.IntegerAttr(kind).value)
    if combine is None:
        raise c.site(op).error(f"memref.atomic_rmw of kind {kind} is not an add, max or min "
                               "(T.atomic_add, a reducer's update)", None)
    value, buf = c.slot(op.operands[0]), c.slot(op.operands[1])
    indices = [c.slot(v) for v in list(op.operands)[2:]]
    site = c.site(op)
    # The value found there, where the program uses it (return_prev=True).
    out = c.slot(op.result) if list(op.result.uses) else None

    def step(st):
        v = st.env[value]
        if st.threads is not None:  # the kernel's own code: every thread adds
            v = np.broadcast_to(v, (st.threads,))
        found = st.env[buf].atomic(site, st, [st.env[i] for i in indices], v, combine,
                                   prev=out is not None)
        if out is not None:
            st.env[out] = found

    return step


@handles("memref.dim")
def _dim(c, op):
    buf, index, out = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.result)

    def step(st):
        st.env[out] = int(st.env[buf].shape[int(st.env[index])])

    return step


@handles("memref.extract_aligned_pointer_as_index")
def _aligned_pointer(c, op):
    """An address, which the interpreter does not model: 0 (only inline PTX,
    which it refuses, reads one)."""
    out = c.slot(op.result)

    def step(st):
        st.env[out] = 0

    return step


@handles("memref.extract_strided_metadata")
def _strided_metadata(c, op):
    """A global tensor's offset (0), sizes and strides in elements (a
    T.StridedTensor's stride symbols are read so)."""
    buf = c.slot(op.operands[0])
    outs = [c.slot(r) for r in op.results]
    rank = (len(outs) - 2) // 2

    def step(st):
        b = st.env[buf]
        st.env[outs[0]] = b
        st.env[outs[1]] = 0
        for k in range(rank):
            st.env[outs[2 + k]] = int(b.data.shape[k])
            st.env[outs[2 + rank + k]] = int(b.data.strides[k] // b.data.itemsize)

    return step


@handles("tile.copy")
def _copy(c, op):
    site = c.site(op)
    src, dst = c.slot(op.src), c.slot(op.dst)
    src_offsets = [c.slot(v) for v in op.src_offsets]
    dst_offsets = [c.slot(v) for v in op.dst_offsets]
    src_sizes = list(ir.DenseI64ArrayAttr(op.attributes["src_sizes"]))
    dst_sizes = list(ir.DenseI64ArrayAttr(op.attributes["dst_sizes"]))
    pred = c.slot(op.pred) if op.pred is not None else None
    is_async = "async" in op.attributes
    adds = TMA_REDUCE_ADD in op.attributes  # T.atomic_add(..., use_tma=True)

    def step(st):
        env = st.env
        s, d = env[src], env[dst]
        if pred is not None and not env[pred]:  # a predicated-off async copy: zeros
            tile = np.zeros(dst_sizes, dtype=d.data.dtype)
        else:
            so = [int(env[o]) for o in src_offsets]
            tile = s.read_region(site, st.block, so, src_sizes).reshape(dst_sizes)
            tile = convert(tile, s.etype, d.etype)
        do = [int(env[o]) for o in dst_offsets]
        if adds:  # each element added (in float32 for 16-bit floats), outside: nothing
            now = d.read_region(site, st.block, do, dst_sizes)
            wide = np.float32 if now.dtype.kind == "f" and now.itemsize < 4 else now.dtype
            tile = (now.astype(wide) + tile.astype(wide)).astype(now.dtype)
        if is_async:  # lands when a later nvvm.cp.async.wait.group completes its group
            st.async_copies.append(lambda: d.write_region(site, st.block, do, dst_sizes, tile))
        else:
            d.write_region(site, st.block, do, dst_sizes, tile)

    return step


@handles("tile.transpose")
def _transpose(c, op):
    site = c.site(op)
    src, dst = c.slot(op.operands[0]), c.slot(op.operands[1])

    def step(st):
        s, d = st.env[src], st.env[dst]
        tile = s.read_region(site, st.block, [0, 0], list(s.shape))
        d.write_region(site, st.block, [0, 0], list(d.shape), tile.T.copy())

    return step


@handles("tile.fill")
def _fill(c, op):
    dst, value = c.slot(op.operands[0]), c.slot(op.operands[1])
    site = c.site(op)

    def step(st):
        buf = st.env[dst]
        races.note(buf, None, True, site, st.block)
        buf.data[...] = st.env[value]
        buf.written[...] = True

    return step


@handles("tile.wait_wgmma", "nvvm.setmaxregister", "nvvm.memory.barrier", "nvvm.bar.warp.sync")
def _nothing_to_do(c, op):
    """The interpreter runs each gemm to completion, so a T.wait_wgmma has
    nothing left to wait for; T.set_max_nreg moves registers between
    warpgroups, which the interpreter has none of; a memory fence (an
    atomic's memory_order) orders nothing in a run that is sequential, and
    the lanes run in lockstep, so T.sync_warp waits for nothing (named
    barriers: tlc.interpreter.warp_groups)."""

    def step(st):
        pass

    return step


@handles("tile.gemm")
def _gemm(c, op):
    site = c.site(op)
    a, b, acc = (c.slot(v) for v in op.operands[:3])
    attrs = op.attributes
    trans_a, trans_b = "transpose_a" in attrs, "transpose_b" in attrs
    clear = "clear_accum" in attrs
    # A prefetching gemm (tile-pipeline-loops' schedule) waits for the cp.async
    # groups itself once it has read its stage: the next iteration's stage lands.
    prefetch_wait = (ir.IntegerAttr(attrs["prefetch_wait"]).value
                     if "prefetch_wait" in attrs else None)

    def step(st):
        env = st.env
        A, B, C = env[a], env[b], env[acc]
        for buf in (A, B) if clear else (A, B, C):
            buf.check_written(site, st.block)
            races.note(buf, None, False, site, st.block)
        races.note(C, None, True, site, st.block)
        x, y = _operand(A), _operand(B)
        # Contiguous operands keep numpy on its BLAS path (a transposed view is slower
        # by 100x there).
        x = np.ascontiguousarray(x.T) if trans_a else x
        y = np.ascontiguousarray(y.T) if trans_b else y
        if C.etype.is_float:
            wide = np.float64 if C.etype.bits == 64 else np.float32
            product = x.astype(wide, copy=False) @ y.astype(wide, copy=False)
            total = product if clear else C.data.astype(wide) + product
        else:  # i8 x i8 -> i32: exact in int64, wrapped to the accumulator
            total = x.astype(np.int64) @ y.astype(np.int64)
            total = total if clear else C.data.astype(np.int64) + total
        C.data[...] = C.etype.make(total)
        C.written[...] = True
        if prefetch_wait is not None:
            complete_async_groups(st, prefetch_wait)

    return step


def _operand(buf):
    """A gemm operand as the tensor cores read it: float32 inputs as tf32."""
    if buf.etype.name == "f32":
        return round_tf32(buf.data)
    if buf.etype.is_float and buf.etype.bits < 64:
        return buf.data.astype(np.float32)
    return buf.data


@handles("tile.reduce")
def _reduce(c, op):
    site = c.site(op)
    src, dst = c.slot(op.operands[0]), c.slot(op.operands[1])
    kind = str(op.attributes["kind"]).split("<")[1].rstrip(">")
    dim = ir.IntegerAttr(op.attributes["dim"]).value
    clear = "clear" in op.attributes
    # NaNs skipped (numpy fmax / fmin, PTX max / min) unless the program asked them kept.
    propagate = "tile.nan_propagate" in op.attributes

    def step(st):
        env = st.env
        S, D = env[src], env[dst]
        S.check_written(site, st.block)
        races.note(S, None, False, site, st.block)
        if not clear:
            D.check_written(site, st.block)
            races.note(D, None, False, site, st.block)
        races.note(D, None, True, site, st.block)
        work = np.float32 if S.etype.is_float and S.etype.bits <= 32 else \
            (np.int64 if not S.etype.is_float else S.data.dtype)
        x = S.data.astype(work)
        if kind in ("abssum", "absmax"):
            x = np.abs(x)
        if kind in ("sum", "abssum"):
            r = x.sum(axis=dim, dtype=work)
        elif kind in ("max", "absmax"):
            r = (np.maximum if propagate else np.fmax).reduce(x, axis=dim)
        else:
            r = (np.minimum if propagate else np.fmin).reduce(x, axis=dim)
        r = r.reshape(D.shape)
        if not clear:
            prev = D.data.astype(work)
            if kind in ("sum", "abssum"):
                r = prev + r
            elif kind == "min":
                r = (np.minimum if propagate else np.fmin)(prev, r)
            else:
                r = (np.maximum if propagate else np.fmax)(prev, r)
        D.data[...] = D.etype.make(r)
        D.written[...] = True

    return step
