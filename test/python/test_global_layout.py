"""T.Layout on global tensors (TileLang's): T.annotate_layout({dQ: T.Layout(shape,
fn)}) places each element of dQ at fn's coordinates of a physical row-major array,
for every access of the kernel (element reads and writes, atomics of elements and
tiles, T.copy regions); FlashAttention's backward pass keeps its dQ accumulator so.
Checked in the interpreter against the placement computed in Python, and compiled
for sm_90a."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at
from tlc.layout import LayoutError

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def dq_layout(buf):
    # a gemm fragment's 8 x 8 blocks made contiguous, as FlashAttention's dQ
    return T.Layout(buf.shape, lambda l, d: [l // 8, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2])


DQ = T.Layout((16, 32), lambda l, d: [l // 8, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2])


def placed(x):
    """x's elements in the physical array of DQ (what the tensor's memory holds)."""
    out = np.zeros(x.size, x.dtype)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[DQ.offset(i, j)] = x[i, j]
    return out.reshape(x.shape)


def test_layout_traces_its_physical_shape():
    assert DQ.get_input_shape() == [16, 32] and DQ.get_output_shape() == [2, 4, 2, 32]
    assert DQ.forward(9, 13) == [1, 1, 1, 4 * 1 + 5 // 2]
    offsets = {DQ.offset(i, j) for i in range(16) for j in range(32)}
    assert offsets == set(range(16 * 32))  # one to one


@pytest.mark.parametrize("fn,message", [
    (lambda i, j: [i, j // 2], "maps the 512 elements of shape [16, 32] into 256 places"),
    (lambda i, j: [i * j], "may only multiply by constants"),
    (lambda i, j: [i // j], "may only divide by constants"),
    (lambda i, j: [i, j % 0], "divides by 0: divisors must be positive"),
    (lambda i, j: [i - 1, j], "coordinate 0 can be negative (-1)"),
    (lambda i, j: [(i - 4) % 16 + 16, j], "takes % of a value that can be negative (-4)"),
    (lambda i, j: [i if i else j], "cannot branch on an index"),
    (lambda i, j: [i, j * 0.5], "computes with integer indices and constants"),
])
def test_bad_layouts_say_why(fn, message):
    with pytest.raises(LayoutError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        T.Layout((16, 32), fn)


@T.prim_func
def scatter(X: T.Tensor((16, 32), "float32"), Y: T.Tensor((16, 32), "float32")):
    with T.Kernel(1, threads=128):
        T.annotate_layout({Y: dq_layout(Y)})
        for i, j in T.Parallel(16, 32):
            Y[i, j] = X[i, j]


@T.prim_func
def gather(Y: T.Tensor((16, 32), "float32"), Z: T.Tensor((16, 32), "float32")):
    with T.Kernel(2, threads=128) as b:
        T.annotate_layout({Y: dq_layout(Y)})
        z = T.alloc_fragment((8, 32), "float32")
        T.copy(Y[b * 8:(b + 1) * 8, :], z)  # a region of the placed tensor
        T.copy(z, Z[b * 8, 0])


@T.prim_func
def accumulate(X: T.Tensor((16, 32), "float32"), Y: T.Tensor((16, 32), "float32")):
    with T.Kernel(2, threads=128) as b:
        T.annotate_layout({Y: dq_layout(Y)})
        x = T.alloc_fragment((8, 32), "float32")
        T.copy(X[b * 8, 0], x)
        for i, j in T.Parallel(8, 32):
            T.atomic_add(Y[b * 8 + i, j], x[i, j])  # elements, as FlashAttention's
        T.atomic_add(Y[b * 8:(b + 1) * 8, :], x)  # and a tile


@T.prim_func
def round_trip(X: T.Tensor((16, 32), "float32"), Z: T.Tensor((16, 32), "float32")):
    Y = T.alloc_global((16, 32), "float32")
    with T.Kernel(1, threads=128):
        T.annotate_layout({Y: dq_layout(Y)})
        T.copy(X, Y)  # into the placed tensor: whole
    with T.Kernel(1, threads=128):  # another kernel: its own annotation
        T.annotate_layout({Y: dq_layout(Y)})
        for i, j in T.Parallel(16, 32):
            Z[i, j] = Y[i, j] * 2.0


X = (np.arange(16 * 32, dtype=np.float32) % 97).reshape(16, 32)


def test_element_writes_go_to_their_places():
    y = np.zeros((16, 32), np.float32)
    tlc.interpret(scatter, X, y)
    np.testing.assert_array_equal(y, placed(X))
    assert not np.array_equal(y, X)


def test_copy_of_a_region_reads_the_places():
    z = np.zeros((16, 32), np.float32)
    tlc.interpret(gather, placed(X), z)
    np.testing.assert_array_equal(z, X)


def test_atomics_of_elements_and_tiles_go_to_their_places():
    y = np.ones((16, 32), np.float32)
    tlc.interpret(accumulate, X, y)
    np.testing.assert_array_equal(y, 1 + 2 * placed(X))


def test_annotations_hold_per_kernel():
    z = np.zeros((16, 32), np.float32)
    tlc.interpret(round_trip, X, z)
    np.testing.assert_array_equal(z, 2 * X)


@pytest.mark.parametrize("prim", [scatter, gather, accumulate])
def test_compiles_for_sm_90a(prim):
    ptx = tlc.compile(prim, target="sm_90a").get_kernel_source()
    assert ".target sm_90a" in ptx


@T.prim_func
def annotated_late(X: T.Tensor((16, 32), "float32"), Y: T.Tensor((16, 32), "float32")):
    with T.Kernel(1, threads=128):
        for i, j in T.Parallel(16, 32):
            Y[i, j] = X[i, j]
        T.annotate_layout({Y: dq_layout(Y)})  # E:late


@T.prim_func
def annotated_shared(X: T.Tensor((16, 32), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((16, 32), "float32")
        T.annotate_layout({s: dq_layout(s)})  # E:shared
        T.copy(X, s)


@T.prim_func
def annotated_wrong_shape(X: T.Tensor((16, 32), "float32"), Y: T.Tensor((16, 32), "float32")):
    with T.Kernel(1, threads=128):
        T.annotate_layout({Y: T.Layout((32, 16), lambda a, b: [b, a])})  # E:shape
        T.copy(X, Y)


@T.prim_func
def vector_atomics_into_placed(X: T.Tensor((16, 32), "float32"),
                               Y: T.Tensor((16, 32), "float32")):
    with T.Kernel(1, threads=128):
        T.annotate_layout({Y: dq_layout(Y)})
        for i, j in T.Parallel(16, 16):
            T.atomic_addx2(Y[i, j * 2], X[i, j * 2])  # E:vector


@pytest.mark.parametrize("prim,marker,at,message", [
    (vector_atomics_into_placed, "vector", "Y[i, j * 2]",
     "T.atomic_addx2 adds 2 adjacent elements; 'Y' has a T.Layout that places them apart"),
    (annotated_late, "late", "dq_layout(Y)",
     "'Y' is accessed before this T.annotate_layout in the kernel"),
    (annotated_shared, "shared", "dq_layout(s)",
     "a T.Layout places the elements of a global tensor; 's' is shared"),
    (annotated_wrong_shape, "shape", "T.Layout((32, 16)",
     "the layout is for shape [32, 16], but 'Y' has shape ['16', '32']"),
])
def test_layout_mistakes_name_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(prim, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, marker, at, message)
