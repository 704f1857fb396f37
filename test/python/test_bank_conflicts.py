"""Bank conflicts of the shared-memory swizzles tile-swizzle-shared-memory picks.

Shared memory has 32 banks of 4 bytes; a 16-byte access takes 4 banks, so a
phase of 8 lanes moving 16 bytes each is conflict-free exactly when the 8
addresses fall in 8 different 16-byte groups of a 128-byte line. ldmatrix
gives 8 row addresses per 8x8 matrix (rows r..r+7, one 16-byte chunk each);
the 16-byte copies filling a buffer write 8 consecutive chunks per phase.
"""

import re

import pytest

from tlc import ir
from tlc.compiler import new_context
from tlc.passmanager import PassManager


def swizzle(offset: int, bits: int, base: int, shift: int) -> int:
    mask = ((1 << bits) - 1) << base
    return offset ^ ((offset >> shift) & mask)


def chosen_swizzle(rows: int, cols: int, dtype: str = "f16"):
    """The swizzle the pass gives a rows x cols A operand (None if none)."""
    text = f"""
    func.func @f() {{
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {{
        %a = tile.alloc_shared : memref<{rows}x{cols}x{dtype}, #gpu.address_space<workgroup>>
        %b = tile.alloc_shared : memref<{cols}x64x{dtype}, #gpu.address_space<workgroup>>
        %c = tile.alloc_fragment : memref<{rows}x64xf32, #tile.space<fragment>>
        tile.gemm %a, %b, %c : memref<{rows}x{cols}x{dtype}, #gpu.address_space<workgroup>>,
            memref<{cols}x64x{dtype}, #gpu.address_space<workgroup>>,
            memref<{rows}x64xf32, #tile.space<fragment>>
      }}
      return
    }}"""
    with new_context():
        module = ir.Module.parse(text)
        PassManager.parse("builtin.module(tile-swizzle-shared-memory)").run(module.operation)
        found = re.search(r"#tile.shared<swizzle = <bits = (\d+), base = (\d+), "
                          r"shift = (\d+)>>} : memref<" + f"{rows}x{cols}", str(module))
    return tuple(int(g) for g in found.groups()) if found else None


def conflicts(phases, swz) -> int:
    """Extra wavefronts over all phases: (max accesses to one 16-byte group) - 1."""
    extra = 0
    for offsets in phases:
        groups = [((swizzle(o, *swz) if swz else o) % 128) // 16 for o in offsets]
        extra += max(groups.count(g) for g in set(groups)) - 1
    return extra


def ldmatrix_phases(rows: int, row_bytes: int):
    for r0 in range(0, rows, 8):
        for chunk in range(row_bytes // 16):
            yield [(r0 + i) * row_bytes + chunk * 16 for i in range(8)]


def copy_phases(rows: int, row_bytes: int):
    chunks = rows * row_bytes // 16
    for first in range(0, chunks, 8):
        yield [(first + i) * 16 for i in range(8)]


# (rows, cols) of f16 operands: rows of 32, 64, 128, 256 and 512 bytes.
SHAPES = [(64, 16), (128, 32), (128, 64), (64, 128), (32, 256)]


@pytest.mark.parametrize("rows,cols", SHAPES)
def test_chosen_swizzle_is_conflict_free(rows, cols):
    swz = chosen_swizzle(rows, cols)
    row_bytes = cols * 2
    assert swz is not None, f"no swizzle chosen for {rows}x{cols} f16"
    assert conflicts(ldmatrix_phases(rows, row_bytes), swz) == 0
    assert conflicts(copy_phases(rows, row_bytes), swz) == 0


@pytest.mark.parametrize("rows,cols", SHAPES[1:])
def test_unswizzled_ldmatrix_conflicts(rows, cols):
    # Without the swizzle the 8 rows of an ldmatrix share bank groups: the
    # counter above does see conflicts (so the test above can fail).
    assert conflicts(ldmatrix_phases(rows, cols * 2), None) > 0


def test_swizzle_is_a_permutation():
    for swz in {chosen_swizzle(r, c) for r, c in SHAPES}:
        size = 1 << (swz[1] + swz[2] + swz[0])
        assert sorted(swizzle(o, *swz) for o in range(0, size, 16)) == list(range(0, size, 16))
