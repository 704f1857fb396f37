"""Buffers: a numpy array per tensor or on-chip buffer, with bounds checks and,
for on-chip buffers, a written-mask that catches reads of unwritten elements."""

from __future__ import annotations

import numpy as np

from . import races
from .numerics import ElementType

SPACE_WORDS = {"global": "tensor", "shared": "shared buffer", "fragment": "fragment",
               "local": "local buffer"}


class Buffer:
    """One buffer of a running block (or a tensor argument of the launch).

    `written` marks the elements of an on-chip buffer that some op of the
    current block has written (buffers are allocated afresh for every block);
    tensors have none. `stored` records that the program wrote a tensor.

    A view (tile.stage, tile.view) knows the allocation it shares storage
    with (`root`) and how its elements map onto the allocation's (`cells`),
    for tlc.interpreter.races, which keeps its records per allocation."""

    def __init__(self, name: str, space: str, etype: ElementType, data: np.ndarray,
                 written: np.ndarray | None = None, root: Buffer | None = None,
                 cells=None):
        self.name = name
        self.space = space
        self.etype = etype
        self.data = data
        self.written = written
        self.stored = False
        self.divergent = None  # (mask, site of the T.Parallel) for local buffers
        self.root = root  # None: this buffer is an allocation
        self._cells = cells  # a view's: () -> its elements' cells in the root
        self._shadow = None  # an allocation's races.Shadow

    @classmethod
    def allocate(cls, name: str, space: str, etype: ElementType, shape) -> Buffer:
        return cls(name, space, etype, np.zeros(shape, dtype=etype.dtype),
                   np.zeros(shape, dtype=bool))

    def view(self, index) -> Buffer:
        """A buffer sharing this one's storage (tile.stage)."""
        return Buffer(self.name, self.space, self.etype, self.data[index],
                      None if self.written is None else self.written[index],
                      self.root or self, lambda: self.cells()[index])

    def reinterpret(self, etype: ElementType, shape) -> Buffer:
        """The same storage with another shape and element type (tile.view of
        a shared buffer: T.reshape / T.view). With the element type unchanged
        the view shares the written-mask too; a view that reinterprets the
        bytes counts every element of both as written from then on (the mask
        is per element, not per byte)."""
        data = self.data.reshape(-1)
        if etype.dtype != self.data.dtype:
            data = data.view(etype.dtype)
            if self.written is not None:
                self.written[...] = True
            written = None if self.written is None else np.ones(shape, dtype=bool)
            # Each element maps to the cell holding its first byte.
            ratio = (etype.dtype.itemsize, self.data.dtype.itemsize)
            cells = lambda: self.cells().reshape(-1)[  # noqa: E731
                np.arange(int(np.prod(shape))) * ratio[0] // ratio[1]].reshape(shape)
        else:
            written = None if self.written is None else self.written.reshape(shape)
            cells = lambda: self.cells().reshape(shape)  # noqa: E731
        return Buffer(self.name, self.space, etype, data.reshape(shape), written,
                      self.root or self, cells)

    def cells(self) -> np.ndarray:
        """Each element's index in its allocation's storage (row-major)."""
        if callable(self._cells):
            self._cells = self._cells()
        if self._cells is None:
            self._cells = np.arange(self.data.size).reshape(self.data.shape)
        return self._cells

    def race_shadow(self, tracker) -> races.Shadow:
        """The allocation's access records for this run of concurrent T.ws bodies."""
        root = self.root or self
        if root._shadow is None or root._shadow.tracker is not tracker:
            root._shadow = races.Shadow(tracker, root.data.size)
        return root._shadow

    @property
    def shape(self) -> tuple:
        return self.data.shape

    def describe(self) -> str:
        dims = "x".join(str(d) for d in self.shape) or "scalar"
        return f"{SPACE_WORDS[self.space]} '{self.name}' ({dims} {self.etype.describe()})"

    # -- regions (tile.copy, fill, gemm, reduce) --------------------------------

    def read_region(self, site, block, offsets, sizes) -> np.ndarray:
        """The region [offsets, offsets + sizes) as a new array. A tensor reads
        zero outside its bounds; an on-chip buffer must contain the region and
        have had every element of it written."""
        if self.space == "global":
            out = np.zeros(sizes, dtype=self.data.dtype)
            src, dst = _clipped(offsets, sizes, self.shape)
            if src is not None:
                out[dst] = self.data[src]
            return out
        index = self._exact(site, block, offsets, sizes, "reads")
        self.check_written(site, block, index, offsets)
        races.note(self, index, False, site, block)
        return self.data[index].copy()

    def write_region(self, site, block, offsets, sizes, values) -> None:
        """Writes `values` (shaped `sizes`) to the region; a tensor skips the
        elements outside its bounds."""
        if self.space == "global":
            self.stored = True
            dst, src = _clipped(offsets, sizes, self.shape)
            if dst is not None:
                self.data[dst] = values[src]
            return
        index = self._exact(site, block, offsets, sizes, "writes")
        races.note(self, index, True, site, block)
        self.data[index] = values
        self.written[index] = True

    def _exact(self, site, block, offsets, sizes, verb: str):
        for dim, (o, s, n) in enumerate(zip(offsets, sizes, self.shape)):
            if o < 0 or o + s > n:
                bad = [o + (s - 1 if o + s > n and o >= 0 else 0) for o, s in zip(offsets, sizes)]
                raise site.error(f"{verb} region [{', '.join(map(str, offsets))}] + "
                                 f"[{', '.join(map(str, sizes))}] outside {self.describe()}: "
                                 f"index {bad} (dimension {dim} has size {n})", block)
        return tuple(slice(o, o + s) for o, s in zip(offsets, sizes))

    def check_written(self, site, block, index=(), origin=None) -> None:
        """Raises when an element of `self.data[index]` was never written."""
        if self.written is None:
            return
        w = self.written[index]
        if w.all():
            return
        first = np.argwhere(~w)[0] if np.ndim(w) else []
        at = [int(f) + (origin[d] if origin else 0) for d, f in enumerate(first)]
        raise self.unwritten_error(site, block, at, "", " (missing copy, fill or clear "
                                                        "before this read?)")

    def unwritten_error(self, site, block, at, where="", hint=""):
        """The error for a read of element `at`, which holds no value."""
        if self.divergent is not None and self.divergent[0][tuple(at)]:
            loop = self.divergent[1].location
            if self.divergent[2]:
                return site.error(f"reads {self.describe()} at index {at}{where}, which "
                                  f"held a different value in each thread when the tile op "
                                  f"at {loop} used it (values computed from "
                                  "T.get_thread_binding are per thread)", block)
            return site.error(f"reads {self.describe()} at index {at}{where}, which the "
                              f"T.Parallel at {loop} left holding a different value in each "
                              "thread (a local buffer is per-thread scratch there)", block)
        return site.error(f"reads {self.describe()} at index {at}{where}, which no thread of "
                          f"the block has written yet{hint}", block)

    # -- elements (memref.load / memref.store) ----------------------------------

    def load(self, site, state, indices):
        """Element read at `indices` (ints, or index arrays inside a tile.parallel)."""
        index, inside, active = self.elements(site, state, indices, "reads")
        if index is None:
            index = tuple(indices)
            if self.written is not None and not self.written[index]:
                raise self.unwritten_error(site, state.block, [int(i) for i in index])
            races.note(self, index, False, site, state.block)
            return self.data[index]
        races.note(self, index, False, site, state.block, active)
        values = self.data[index]
        if self.written is not None:
            unwritten = ~self.written[index]
            if active is not None:
                unwritten &= active
            if unwritten.any():
                at = [int(np.broadcast_to(i, unwritten.shape)[tuple(np.argwhere(unwritten)[0])])
                      for i in index]
                raise self.unwritten_error(site, state.block, at, _lane(state, unwritten))
        if inside is not None:
            values = np.where(inside, values, self.data.dtype.type(0))
        return values

    def store(self, site, state, indices, value) -> None:
        """Element write of `value` at `indices` (masked by the lanes that run)."""
        index, inside, active = self.elements(site, state, indices, "writes")
        if self.space == "global":
            self.stored = True
        if index is None and np.ndim(value) == 0:
            races.note(self, tuple(indices), True, site, state.block)
            self.data[tuple(indices)] = value
            if self.written is not None:
                self.written[tuple(indices)] = True
            return
        if index is None:  # one element, a value per thread
            index = tuple(np.asarray(i) for i in indices)
        index, values, lanes = _running_lanes(index, inside, active, value)
        if values.size > 1:
            self._check_race(site, state, index, values, lanes)
        races.note(self, index, True, site, state.block)
        self.data[index] = values
        if self.written is not None:
            self.written[index] = True

    def atomic(self, site, state, indices, value, combine: str = "add", prev: bool = False):
        """memref.atomic_rmw at `indices` (T.atomic_add's adds and
        T.atomic_max / T.atomic_min, a reducer's max/min updates): every
        running lane combines its value in, several into one element included;
        elements outside a tensor get nothing. Each add rounds to the element
        type, as the hardware's. With `prev`, returns what each lane found
        there (lanes in order; lanes that did not run: 0)."""
        index, inside, active = self.elements(site, state, indices, "adds into")
        if self.space == "global":
            self.stored = True
        if index is None and np.ndim(value) == 0:
            index = tuple(indices)
            old = self.data[index].copy()
            self.data[index] = self.etype.make(_COMBINE[combine](self.data[index], value))
            self._mark(index)
            return old if prev else None
        if index is None:  # one element, a value per thread
            index = tuple(np.asarray(i) for i in indices)
        index, values, lanes = _running_lanes(index, inside, active, value)
        self._mark(index)
        if prev:
            olds = np.zeros(values.shape, self.data.dtype)
            for n, (at, v) in enumerate(zip(zip(*index), values)):
                olds[n] = self.data[at]
                self.data[at] = self.etype.make(_COMBINE[combine](self.data[at], v))
            found = np.zeros(lanes.shape, self.data.dtype)
            found[lanes] = olds
            return found
        if combine == "assign":  # T.atomic_store: the last lane's value stays
            self.data[index] = values.astype(self.data.dtype)
            return
        if combine != "add":  # exact: no rounding
            ufunc = np.maximum if combine == "max" else np.minimum
            ufunc.at(self.data, index, values.astype(self.data.dtype))
            return
        if self.etype.round is None and self.data.dtype.kind in "iu":
            np.add.at(self.data, index, values.astype(self.data.dtype))
            return
        for at, v in zip(zip(*index), values):  # one rounding per add, in lane order
            self.data[at] = self.etype.make(self.data[at] + v)

    def _mark(self, index) -> None:
        """Elements an atomic reached count as written (they held a value before:
        the interpreter reports reads of unwritten ones elsewhere)."""
        if self.written is not None:
            self.written[index] = True

    def _check_race(self, site, state, index, values, lanes) -> None:
        """Two iterations of a tile.parallel storing different values to one
        element race on the GPU (either may win): an error here."""
        linear = np.ravel_multi_index(index, self.shape)
        order = np.argsort(linear, kind="stable")
        same = linear[order][1:] == linear[order][:-1]
        if not same.any():
            return
        v = values[order]
        differ = same & (v[1:] != v[:-1])
        if self.etype.is_float:
            differ &= ~(np.isnan(v[1:]) & np.isnan(v[:-1]))
        if not differ.any():
            return
        k = int(np.argmax(differ))
        where = np.argwhere(lanes)
        first, second = (tuple(int(x) for x in where[order[n]]) for n in (k, k + 1))
        at = [int(i[order[k]]) for i in index]
        who = (f"threads {first[0]} and {second[0]}" if state.threads is not None
               else f"T.Parallel iterations {first} and {second}")
        raise site.error(f"{who} both write "
                         f"{self.describe()} at index {at}, different values ({v[k]} and "
                         f"{v[k + 1]}): a race on the GPU, where either may win", state.block)

    def elements(self, site, state, indices, verb):
        """(numpy index or None for the plain scalar case, in-bounds mask where a
        tensor access inside tile.parallel is masked, active-lane mask)."""
        active = state.mask
        scalar = active is None and all(isinstance(i, (int, np.integer)) for i in indices)
        masked = self.space == "global" and state.in_parallel
        if scalar and not masked:
            for dim, (i, n) in enumerate(zip(indices, self.shape)):
                if not 0 <= i < n:
                    raise site.error(f"{verb} outside {self.describe()}: index "
                                     f"{[int(x) for x in indices]} (dimension {dim} has size "
                                     f"{n})", state.block)
            return None, None, None
        inside = None
        for i, n in zip(indices, self.shape):
            ok = (np.asarray(i) >= 0) & (np.asarray(i) < n)
            inside = ok if inside is None else inside & ok
        if inside.all():
            return tuple(indices), None, active
        if not masked:
            bad = ~inside if active is None else ~inside & active
            if bad.any():
                lane = tuple(np.argwhere(bad)[0])
                at = [int(np.broadcast_to(i, bad.shape)[lane]) for i in indices]
                raise site.error(f"{verb} outside {self.describe()}: index {at}"
                                 + _lane(state, bad), state.block)
        clipped = tuple(np.where(inside, i, 0) for i in indices)
        return clipped, (inside if masked else None), active


_COMBINE = {"add": lambda a, b: a + b, "max": np.maximum, "min": np.minimum,
            "assign": lambda a, b: b}


def _running_lanes(index, inside, active, value):
    """The element indices and values of the lanes of a masked access that
    run (active, and inside the tensor where that is masked), and the lane
    mask over the broadcast shape."""
    keep = active if inside is None else (inside if active is None else inside & active)
    shapes = [np.shape(i) for i in index] + [np.shape(value)]
    shape = np.broadcast_shapes(*shapes, *([] if keep is None else [keep.shape]))
    lanes = np.ones(shape, bool) if keep is None else np.broadcast_to(keep, shape)
    index = tuple(np.broadcast_to(i, shape)[lanes] for i in index)
    return index, np.broadcast_to(value, shape)[lanes], lanes


def _lane(state, bad) -> str:
    """ ' at T.Parallel iteration (...)' for the first offending lane."""
    if state.parallel_shape is None:
        return ""
    if state.threads is not None:
        return f" (thread {int(np.argwhere(np.broadcast_to(bad, (state.threads,)))[0][0])})"
    full = np.broadcast_to(bad, np.broadcast_shapes(bad.shape, state.parallel_shape))
    lane = np.argwhere(full)[0][-len(state.parallel_shape):]
    return f" (T.Parallel iteration {tuple(int(x) for x in lane)})"


def _clipped(offsets, sizes, shape):
    """(index into the buffer, index into the region) of the part of the
    region [offsets, offsets + sizes) inside `shape`; (None, None) if empty."""
    inner, outer = [], []
    for o, s, n in zip(offsets, sizes, shape):
        lo, hi = max(o, 0), min(o + s, n)
        if lo >= hi:
            return None, None
        inner.append(slice(lo, hi))
        outer.append(slice(lo - o, hi - o))
    return tuple(inner), tuple(outer)
