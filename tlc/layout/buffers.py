"""The layouts the compiler chose for a kernel's on-chip buffers, as objects.

`FragmentLayout`: a register fragment (#tile.layout): which thread and register
hold each element. `SharedLayout`: a shared-memory buffer: the byte address
and the bank of each element (the XOR swizzle #tile.swizzle, the column
blocks of wgmma operands, the stages of a pipelined loop). Both are read from
a compiled kernel with `kernel.layouts()` and drawn with `tlc.layout.plot`.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import TABLE
from .affine import evaluate
from .errors import LayoutError

BANKS = 32  # shared memory: 32 banks of 4 bytes
BANK_BYTES = 4


def dtype_name(element_type: str) -> str:
    """The language's name of an MLIR element type ("f16" -> "float16")."""
    return next((d.name for d in TABLE if d.mlir == element_type), element_type)


def _check_shape(shape) -> tuple[int, ...]:
    shape = tuple(shape)
    if not shape or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0
                            for d in shape):
        raise LayoutError(f"a layout's shape is a tuple of positive ints, got {shape!r}")
    return shape


def _check_int(value, what: str, stop: int) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise LayoutError(f"{what} must be an int, got {value!r}")
    if not 0 <= value < stop:
        raise LayoutError(f"{what} {value} is outside 0..{stop - 1}")
    return int(value)


class _Layout:
    """What both kinds share: a name, a shape, an element type."""

    kind = ""
    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def _index(self, index) -> tuple[int, ...]:
        if len(index) != self.rank:
            raise LayoutError(f"'{self.name}' is {self.rank}-D {self.shape}: an element has "
                              f"{self.rank} indices, got {len(index)}")
        return tuple(_check_int(i, f"index {k} of '{self.name}'", d)
                     for k, (i, d) in enumerate(zip(index, self.shape)))


class FragmentLayout(_Layout):
    """A register fragment spread over `threads` threads of `regs` registers.

    `map` is the #tile.layout's affine map `(thread, register) -> element`,
    as MLIR prints it: `(d0, d1) -> (d0 floordiv 4, ...)`. When
    `threads * regs` exceeds the element count, each element is held by
    `replication` (thread, register) pairs (a row maximum every thread of the
    row keeps, for instance)."""

    kind = "fragment"

    def __init__(self, shape, threads: int, regs: int, map: str,  # noqa: A002
                 dtype: str = "float32", name: str = ""):
        self.shape = _check_shape(shape)
        self.name, self.dtype, self.map = name or "fragment", dtype, map
        for what, n in (("threads", threads), ("regs", regs)):
            if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
                raise LayoutError(f"a fragment layout's {what} must be a positive int, "
                                  f"got {n!r}")
        self.threads, self.regs = threads, regs
        coords = evaluate(map, np.arange(threads)[:, None], np.arange(regs)[None, :])
        if len(coords) != self.rank:
            raise LayoutError(f"'{self.name}': the layout map gives {len(coords)} indices; "
                              f"the buffer is {self.rank}-D {self.shape}")
        for k, (c, d) in enumerate(zip(coords, self.shape)):
            bad = np.argwhere((c < 0) | (c >= d))
            if bad.size:
                t, r = (int(x) for x in bad[0])
                raise LayoutError(f"'{self.name}': the layout sends thread {t} register {r} "
                                  f"to {tuple(int(x[t, r]) for x in coords)}, outside "
                                  f"{self.shape}")
        self._coords = np.stack(coords, axis=-1)  # (threads, regs, rank)
        flat = np.ravel_multi_index(tuple(coords), self.shape).ravel()
        counts = np.bincount(flat, minlength=self.numel)
        self.replication = threads * regs // self.numel
        if threads * regs % self.numel or not (counts == self.replication).all():
            missing = np.unravel_index(int(np.argmin(counts)), self.shape)
            raise LayoutError(f"'{self.name}': the layout does not hold every element of "
                              f"{self.shape} equally often (element "
                              f"{tuple(int(i) for i in missing)} is held {counts.min()} "
                              f"times, another {counts.max()} times)")
        # (thread, register) pairs by element, lowest thread (then register) first.
        order = np.argsort(flat, kind="stable")
        self._holders = order.reshape(self.numel, self.replication)

    def element(self, thread: int, reg: int) -> tuple[int, ...]:
        """The index of the element register `reg` of `thread` holds."""
        t = _check_int(thread, "thread", self.threads)
        r = _check_int(reg, "register", self.regs)
        return tuple(int(i) for i in self._coords[t, r])

    def holders(self, *index: int) -> list[tuple[int, int]]:
        """Every (thread, register) that holds the element, lowest thread first."""
        flat = np.ravel_multi_index(self._index(index), self.shape)
        return [(int(p) // self.regs, int(p) % self.regs) for p in self._holders[flat]]

    def thread_and_register(self, *index: int) -> tuple[int, int]:
        """The (thread, register) holding the element (the lowest thread, when
        several hold it: see `replication` and `holders`)."""
        return self.holders(*index)[0]

    def owner_grids(self) -> tuple[np.ndarray, np.ndarray]:
        """Arrays of the buffer's shape: the thread and the register holding
        each element (the lowest thread where several do)."""
        first = self._holders[:, 0]
        return (first // self.regs).reshape(self.shape), (first % self.regs).reshape(self.shape)

    def __repr__(self) -> str:
        extra = f", replicated x{self.replication}" if self.replication > 1 else ""
        return (f"FragmentLayout('{self.name}', {self.shape} {self.dtype}, "
                f"threads={self.threads}, regs={self.regs}{extra}, map={self.map})")


class SharedLayout(_Layout):
    """A shared-memory buffer: where each element lies and in which bank.

    Element `index` of stage `stage` lies at byte `address(*index, stage=stage)`
    of the block's shared memory, as the compiler addresses it: the row-major
    position (column blocks of `column_block` columns first, where wgmma asked
    for them), its byte offset XOR-swizzled (`swizzle = (bits, base, shift)`:
    `o ^ ((o >> shift) & (((1 << bits) - 1) << base))`), the stage's base and
    the buffer's `offset`. Its bank is `(address // 4) % 32`."""

    kind = "shared"

    def __init__(self, shape, dtype: str = "float16", element_bytes: int | None = None,
                 swizzle: tuple[int, int, int] | None = None, offset: int = 0,
                 stages: int = 1, column_block: int = 0, name: str = ""):
        self.shape = _check_shape(shape)
        self.name, self.dtype = name or "shared", dtype
        if element_bytes is None:
            from ..dtypes import lookup

            try:
                element_bytes = lookup(dtype).itemsize
            except ValueError as e:
                raise LayoutError(str(e)) from None
        self.element_bytes = element_bytes
        if swizzle is not None:
            swizzle = tuple(swizzle)
            if len(swizzle) != 3 or not all(isinstance(v, int) and v >= 0 for v in swizzle):
                raise LayoutError(f"a swizzle is (bits, base, shift), got {swizzle!r}")
            if swizzle[0] == 0:
                swizzle = None  # bits = 0 is the identity
        self.swizzle = swizzle
        self.offset, self.stages, self.column_block = offset, stages, column_block
        if column_block and (self.rank != 2 or self.shape[1] % column_block):
            raise LayoutError(f"'{self.name}': column blocks of {column_block} need a 2-D "
                              f"buffer whose columns they divide, got {self.shape}")

    def addresses(self, stage: int = 0) -> np.ndarray:
        """The byte address of every element of stage `stage` (an array of the
        buffer's shape)."""
        return self._address(tuple(np.indices(self.shape)), stage)

    def address(self, *index: int, stage: int = 0) -> int:
        """The byte address of one element in the block's shared memory."""
        return int(self._address(self._index(index), stage))

    def _address(self, index: tuple, stage: int):
        stage = _check_int(stage, "stage", self.stages)
        if self.column_block:
            rows, block = self.shape[0], self.column_block
            flat = ((index[1] // block) * rows + index[0]) * block + index[1] % block
        else:
            flat = np.ravel_multi_index(index, self.shape)
        size = self.element_bytes
        base = stage * self.numel
        # As the compiler does (TileAccess.cpp, sharedAddress): a stage base that
        # is a multiple of the swizzle's period is added after the swizzle.
        period = 1 << sum(self.swizzle) if self.swizzle else 1
        base_last = self.numel * size % period == 0
        if not base_last:
            flat = flat + base
        if self.swizzle:
            bits, low, shift = self.swizzle
            mask = ((1 << bits) - 1) << low
            byte = flat * size
            flat = (byte ^ ((byte >> shift) & mask)) // size
        if base_last:
            flat = flat + base
        return self.offset + flat * size

    def banks(self, stage: int = 0) -> np.ndarray:
        """The bank (0-31) of every element (an array of the buffer's shape)."""
        return (self.addresses(stage) // BANK_BYTES) % BANKS

    def bank(self, *index: int, stage: int = 0) -> int:
        """The bank (0-31) the element lies in."""
        return self.address(*index, stage=stage) // BANK_BYTES % BANKS

    def __repr__(self) -> str:
        swizzle = "none" if not self.swizzle else "bits={}, base={}, shift={}".format(
            *self.swizzle)
        stages = f", stages={self.stages}" if self.stages > 1 else ""
        block = f", column_block={self.column_block}" if self.column_block else ""
        return (f"SharedLayout('{self.name}', {self.shape} {self.dtype}, offset={self.offset}, "
                f"swizzle={swizzle}{stages}{block})")
