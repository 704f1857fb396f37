"""Local buffers inside a tile.parallel: one private copy per iteration.

Every thread holds its own copy of a T.alloc_local buffer and runs the
iterations it owns one after another, so inside T.Parallel a local buffer is
per-iteration scratch (`acc[0] = 0; for k in T.serial(K): acc[0] += x[i, k]`).
Each iteration gets a copy of the buffer as it was before the loop. After
the loop an element keeps a value only where every iteration left the same
one: elsewhere a thread's copy depends on which iterations it ran, and a
later read is reported.
"""

from __future__ import annotations

import numpy as np

from .buffers import Buffer


def _copy_of(st, buf: Buffer) -> Buffer:
    entry = st.private.get(id(buf))
    if entry is None:
        shape = tuple(st.parallel_shape) + buf.shape
        copy = Buffer(buf.name, buf.space, buf.etype,
                      np.broadcast_to(buf.data, shape).copy(),
                      np.broadcast_to(buf.written, shape).copy())
        entry = st.private[id(buf)] = (buf, copy)
    return entry[1]


def load(site, st, buf: Buffer, indices):
    """This iteration's element of `buf` at `indices`, in every lane."""
    index, _, active = buf.elements(site, st, indices, "reads")  # bounds, on the buffer
    index = tuple(indices) if index is None else index
    copy = _copy_of(st, buf)
    full = (*st.parallel_lanes, *index)
    unwritten = ~copy.written[full]
    if active is not None:
        unwritten &= active
    if unwritten.any():
        lane = tuple(np.argwhere(unwritten)[0])
        at = [int(np.broadcast_to(i, unwritten.shape)[lane]) for i in index]
        where = (f" (thread {int(lane[0])})" if st.threads is not None
                 else f" (T.Parallel iteration {tuple(int(x) for x in lane)})")
        raise buf.unwritten_error(site, st.block, at, where)
    return copy.data[full]


def store(site, st, buf: Buffer, indices, value) -> None:
    """Writes `value` to each running iteration's copy of `buf` at `indices`."""
    index, _, active = buf.elements(site, st, indices, "writes")
    index = tuple(indices) if index is None else index
    copy = _copy_of(st, buf)
    full = (*st.parallel_lanes, *index)
    shape = np.broadcast_shapes(*(np.shape(i) for i in full), np.shape(value))
    full = tuple(np.broadcast_to(i, shape) for i in full)
    value = np.broadcast_to(value, shape)
    if active is not None:
        keep = np.broadcast_to(active, shape)
        full, value = tuple(i[keep] for i in full), value[keep]
    copy.data[full] = value
    copy.written[full] = True


def merge(site, st, per_thread: bool = False) -> None:
    """After a tile.parallel: each local buffer it used keeps the elements all
    iterations agree on; the others are marked as differing between threads.
    `per_thread`: the copies are the threads' own (a kernel that reads the
    thread index), merged before tile op `site` uses the buffers."""
    rank = len(st.parallel_shape)
    axes, first = tuple(range(rank)), (0,) * rank
    for buf, copy in st.private.values():
        data, written = copy.data, copy.written
        equal = data == data[first]
        if buf.etype.is_float:
            equal |= np.isnan(data) & np.isnan(data[first])
        same = (equal & (written == written[first])).all(axis=axes)
        buf.data[...] = np.where(same, data[first], buf.data)
        buf.written[...] = same & written[first]
        buf.divergent = (~same, site, per_thread)
    st.private = {}
