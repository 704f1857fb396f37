"""TileLang's `T.Fragment`: a register layout written from the element's side.

    T.Fragment(shape, forward_thread_fn=lambda i, j: ..., forward_index_fn=lambda i, j: ...)
    T.Fragment(shape, forward_fn=lambda i, j: (thread, index))
    T.Fragment(shape, forward_fn=lambda i, rep: (rep, i), replicate=128)

maps every element of a fragment (and every replica of it, `rep` in
[0, replicate)) to the thread holding it and that thread's local index.
tlc's #tile.layout is written the other way round, from the holder's side:
an affine map (thread, register) -> element. A Fragment keeps the table of
its functions' values (they are called on ints, once per element and
replica, when it is made), and `tile_layout` inverts the table and finds the
affine map (tlc.layout.affine_fit), after checking that it is a layout tlc can
use: every thread of the block holds the same number of registers, each
register exactly one element, each element `replicate` times.

Without `forward_index_fn`, a thread's local indices number its elements in
row-major order (TileLang infers the index from the part of the element
index the thread does not use, which orders them the same way).
"""

from __future__ import annotations

import math

import numpy as np

from .affine_fit import fit_map
from .errors import LayoutError


def _shape(shape) -> tuple[int, ...]:
    try:
        shape = tuple(shape)
    except TypeError:
        raise LayoutError(f"a Fragment's shape is a tuple of positive ints, got {shape!r}") \
            from None
    if not shape or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                            and d > 0 for d in shape):
        raise LayoutError(f"a Fragment's shape is a tuple of positive ints (static sizes), "
                          f"got {shape!r}")
    return tuple(int(d) for d in shape)


def _int(value, what: str) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    raise LayoutError(f"{what} is {value!r}, not an integer")


def _call(fn, name: str, args: tuple):
    try:
        return fn(*args)
    except LayoutError:
        raise
    except Exception as e:
        raise LayoutError(f"{name}{args} raised {type(e).__name__}: {e}") from None


def _element(flat: int, shape) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape))


class Fragment:
    """The layout of a register fragment, as TileLang writes it (tilelang.layout.Fragment).

    shape: the fragment's shape (static ints).
    forward_fn: (*index[, rep]) -> (thread, local index); or
    forward_thread_fn: (*index[, rep]) -> thread, with forward_index_fn:
        (*index) -> local index (an int or a tuple of ints; by default each
        thread's elements numbered in row-major order).
    replicate: how many threads hold each element; the functions then take
        the replica `rep` in [0, replicate) after the element's index.

    Give it to a fragment with `T.annotate_layout({buf: T.Fragment(...)})`."""

    def __init__(self, shape, forward_fn=None, forward_thread_fn=None, replicate=1,
                 forward_index_fn=None):
        shape = _shape(shape)
        replicate = _int(replicate, "replicate")
        if replicate < 1:
            raise LayoutError(f"replicate must be at least 1, got {replicate}")
        if forward_fn is not None and (forward_thread_fn is not None
                                       or forward_index_fn is not None):
            raise LayoutError("give a Fragment either forward_fn (returning (thread, index)) "
                              "or forward_thread_fn with forward_index_fn, not both")
        if forward_fn is None and forward_thread_fn is None:
            raise LayoutError("a Fragment needs forward_fn (element -> (thread, index)) or "
                              "forward_thread_fn (element -> thread)")
        numel = math.prod(shape)
        threads = np.empty((numel, replicate), dtype=np.int64)
        indices: list = [None] * (numel * replicate)
        for flat, element in enumerate(np.ndindex(*shape)):
            index = None
            if forward_index_fn is not None:
                index = _call(forward_index_fn, "forward_index_fn", element)
            for rep in range(replicate):
                args = element + (rep,) if replicate > 1 else element
                if forward_fn is not None:
                    pair = _call(forward_fn, "forward_fn", args)
                    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                        raise LayoutError(f"forward_fn{args} returned {pair!r}; it returns "
                                          "(thread, index)")
                    thread, index = pair
                else:
                    thread = _call(forward_thread_fn, "forward_thread_fn", args)
                where = f"the thread of element {element}" + (
                    f" (replica {rep})" if replicate > 1 else "")
                threads[flat, rep] = _int(thread, where)
                if threads[flat, rep] < 0:
                    raise LayoutError(f"{where} is {int(threads[flat, rep])}, a negative thread")
                indices[flat * replicate + rep] = index
        self.shape, self.replicate_size = shape, replicate
        self._threads = threads
        self._set_index(indices, forward_fn is None and forward_index_fn is None)

    def _set_index(self, indices: list, infer: bool) -> None:
        numel, replicate = self._threads.shape
        if infer:
            # Each thread's elements in row-major order, numbered 0, 1, ...
            first = self._threads[:, 0]
            order = np.argsort(first, kind="stable")
            rank = np.empty(numel, dtype=np.int64)
            starts = np.searchsorted(first[order], first[order])
            rank[order] = np.arange(numel) - starts
            local = np.repeat(rank[:, None, None], replicate, axis=1)
        else:
            rows = []
            for k, index in enumerate(indices):
                element = _element(k // replicate, self.shape)
                parts = index if isinstance(index, (tuple, list)) else (index,)
                rows.append([_int(p, f"the local index of element {element}") for p in parts])
            dims = {len(r) for r in rows}
            if len(dims) != 1 or not rows[0]:
                raise LayoutError("the local index has the same number of parts for every "
                                  f"element (found {sorted(dims)})")
            local = np.array(rows, dtype=np.int64).reshape(numel, replicate, -1)
            if (local < 0).any():
                k = int(np.argwhere(local < 0)[0][0])
                raise LayoutError(f"the local index of element {_element(k, self.shape)} "
                                  "is negative")
        self._local = local  # (elements, replicas, index parts)

    @classmethod
    def _from_tables(cls, shape, threads: np.ndarray, local: np.ndarray) -> Fragment:
        self = cls.__new__(cls)
        self.shape, self.replicate_size = tuple(shape), threads.shape[1]
        self._threads, self._local = threads, local
        return self

    # -- TileLang's queries --------------------------------------------------------

    def get_input_shape(self) -> list[int]:
        """The fragment's shape."""
        return list(self.shape)

    def get_output_shape(self) -> list[int]:
        """The shape of each thread's local buffer (the local indices' extents)."""
        return [int(x) + 1 for x in self._local.max(axis=(0, 1))]

    def get_thread_size(self) -> int:
        """The number of threads it spreads over (the largest thread + 1)."""
        return int(self._threads.max()) + 1

    def is_equal(self, other: Fragment) -> bool:
        """Whether `other` places every element (and replica) the same way."""
        return (isinstance(other, Fragment) and self.shape == other.shape
                and np.array_equal(self._threads, other._threads)
                and np.array_equal(self._local, other._local))

    def replicate(self, replicate: int) -> Fragment:
        """This layout repeated on `replicate` times as many threads: replica
        `rep` of an element is on thread(rep mod R) + threads * (rep // R)."""
        n = _int(replicate, "replicate")
        if n < 1:
            raise LayoutError(f"replicate must be at least 1, got {n}")
        size = self.get_thread_size()
        threads = np.concatenate([self._threads + size * k for k in range(n)], axis=1)
        local = np.concatenate([self._local] * n, axis=1)
        return Fragment._from_tables(self.shape, threads, local)

    def repeat(self, repeats, repeat_on_thread: bool = False,
               lower_dim_first: bool = True) -> Fragment:
        """The layout of a tile `repeats[d]` times larger along each dimension d,
        each copy of the tile placed like this one on further threads
        (`repeat_on_thread`) or in further registers; copies are counted
        row-major (`lower_dim_first`: the last dimension fastest) or
        column-major."""
        repeats = [repeats] if isinstance(repeats, (int, np.integer)) else list(repeats)
        if len(repeats) != len(self.shape):
            raise LayoutError(f"repeat takes one count per dimension ({len(self.shape)}), "
                              f"got {repeats!r}")
        repeats = [_int(r, "a repeat count") for r in repeats]
        if min(repeats) < 1:
            raise LayoutError(f"repeat counts must be at least 1, got {repeats}")
        shape = tuple(d * r for d, r in zip(self.shape, repeats))
        index = np.indices(shape).reshape(len(shape), -1)
        base = np.ravel_multi_index(tuple(i % d for i, d in zip(index, self.shape)), self.shape)
        copy_index = tuple(i // d for i, d in zip(index, self.shape))
        if lower_dim_first:
            copy = np.ravel_multi_index(copy_index, repeats)
        else:
            copy = np.ravel_multi_index(copy_index[::-1], repeats[::-1])
        threads, local = self._threads[base], self._local[base]
        if repeat_on_thread:
            threads = threads + self.get_thread_size() * copy[:, None]
        else:
            if local.shape[2] != 1:
                raise LayoutError("repeat in registers needs a one-part local index")
            local = local + self.get_output_shape()[0] * copy[:, None, None]
        return Fragment._from_tables(shape, threads, local)

    def __repr__(self) -> str:
        rep = f", replicate={self.replicate_size}" if self.replicate_size > 1 else ""
        return (f"Fragment(shape={list(self.shape)}, threads={self.get_thread_size()}, "
                f"local={self.get_output_shape()}{rep})")

    # -- tlc's layout ----------------------------------------------------------------

    def tile_layout(self, threads: int | None = None, name: str = "fragment"):
        """(threads, regs, map) of the #tile.layout holding the same elements
        in the same registers, on `threads` threads (the kernel's; by default
        get_thread_size()). A LayoutError says why there is none."""
        size = self.get_thread_size()
        if threads is None:
            threads = size
        if size > threads:
            flat, rep = (int(x) for x in np.argwhere(self._threads >= threads)[0])
            raise LayoutError(f"the layout puts element {_element(flat, self.shape)} of "
                              f"'{name}' on thread {int(self._threads[flat, rep])}, but the "
                              f"kernel has {threads} threads")
        if size < threads:
            raise LayoutError(f"the layout spreads '{name}' over threads 0-{size - 1}, but the "
                              f"kernel has {threads} threads: tlc places a fragment on every "
                              "thread of the block (give the other threads replicas)")
        extents = self.get_output_shape()
        regs = math.prod(extents)
        local = np.ravel_multi_index(tuple(np.moveaxis(self._local, 2, 0)), extents)
        slots = (self._threads * regs + local).ravel()
        owner = np.full(threads * regs, -1, dtype=np.int64)
        numel = math.prod(self.shape)
        elements = np.repeat(np.arange(numel), self.replicate_size)
        order = np.argsort(slots, kind="stable")
        twice = np.flatnonzero(slots[order][1:] == slots[order][:-1])
        if twice.size:
            a, b = elements[order[twice[0]]], elements[order[twice[0] + 1]]
            t, r = divmod(int(slots[order[twice[0]]]), regs)
            what = (f"element {_element(a, self.shape)} twice (two of its replicas)" if a == b
                    else f"both element {_element(a, self.shape)} and element "
                         f"{_element(b, self.shape)}")
            raise LayoutError(f"the layout puts {what} of '{name}' in register {r} of thread "
                              f"{t}; each register holds one element, each element is held "
                              f"by {self.replicate_size} different registers (replicate)")
        owner[slots] = elements
        if (owner < 0).any():
            t, r = divmod(int(np.argmin(owner)), regs)
            counts = np.bincount(self._threads.ravel(), minlength=threads)
            raise LayoutError(
                f"the layout leaves register {r} of thread {t} empty (local indices run to "
                f"{regs - 1}; thread {t} holds {counts[t]} element(s), thread "
                f"{int(np.argmax(counts))} holds {counts.max()}): tlc needs every thread to "
                "hold the same number of elements, in registers 0, 1, ...")
        coords = np.stack(np.unravel_index(owner.reshape(threads, regs), self.shape), axis=-1)
        found = fit_map(coords)
        if found is None:
            raise LayoutError(
                f"the layout of '{name}' is valid but not affine: tlc's #tile.layout needs "
                "each element index as a sum of terms ((thread floordiv a) mod b) * c and "
                "((register floordiv a) mod b) * c (bit fields of the thread and the "
                "register, or mixed-radix digits), and this one is not")
        return threads, regs, found

    def to_layout(self, threads: int | None = None, dtype: str = "float32",
                  name: str = "fragment"):
        """This layout as a tlc.layout.FragmentLayout (see tile_layout)."""
        from .buffers import FragmentLayout

        t, regs, amap = self.tile_layout(threads, name)
        return FragmentLayout(self.shape, t, regs, amap, dtype, name)


def make_fully_replicated_layout_fragment(buffer, threads: int) -> Fragment:
    """Every thread holds the whole of `buffer` (a fragment, or its shape), in
    row-major order: TileLang's layout for small index tables and masks."""
    shape = _shape(buffer.shape if hasattr(buffer, "shape") else buffer)
    n = _int(threads, "threads")

    def thread(*args):  # the replica, when there are several
        return args[len(shape)] if n > 1 else 0

    return Fragment(shape, forward_thread_fn=thread, replicate=n)


def make_gemm_fragment_8x8() -> Fragment:
    """One warp's 8x8 tile as ldmatrix / mma hold it: lane 4i + j/2 holds row
    i, columns j and j+1 (local index j mod 2)."""
    return Fragment((8, 8), forward_thread_fn=lambda i, j: 4 * i + j // 2,
                    forward_index_fn=lambda i, j: j % 2)


def make_gemm_fragment_8x8_transposed() -> Fragment:
    """make_gemm_fragment_8x8 of the transposed tile: lane 4j + i/2 holds
    column j, rows i and i+1."""
    return Fragment((8, 8), forward_thread_fn=lambda i, j: 4 * j + i // 2,
                    forward_index_fn=lambda i, j: i % 2)
