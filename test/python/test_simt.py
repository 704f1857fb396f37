"""Per-thread (SIMT) code as TileLang's top-k selector writes it: helper
functions called with run-time values (built in place, as T.macro), bit
reinterpretation and bitwise operators, region fills, shared-memory atomics,
and a scan run by part of the block in code only some threads run, ordered by
the program's named barriers."""

import re

import numpy as np
import pytest

import tlc
import tlc.language as T
from ptxas import assemble


def ordered_bits(x):
    # A plain helper (no decorator), called with a run-time float: its body
    # is built in place of each call. Floats map to uint32 in their order.
    bits = T.reinterpret(x, T.uint32)
    return T.if_then_else(x < 0, ~bits, bits | T.cast(0x80000000, T.uint32))


@T.prim_func
def radix_histogram(X: T.Tensor((4, 1024), "float32"), H: T.Tensor((4, 256), "int32"),
                    S: T.Tensor((4, 256), "int32"), R: T.Tensor((4, 1024), "int32")):
    """Per row: a histogram of the keys' top 8 bits (shared atomics, each
    thread's slot from return_prev), then its suffix sums by half the block
    (a Hillis-Steele scan on named barrier 3)."""
    with T.Kernel(4, threads=512) as row:
        tx = T.get_thread_binding()
        hist = T.alloc_shared((257,), "int32")
        v = T.alloc_var("int32")
        T.fill(hist, 0)
        T.fill(hist[256], 7)  # one element: a region fill
        for j in T.serial(2):
            key = ordered_bits(X[row, j * 512 + tx]) >> 24
            R[row, j * 512 + tx] = T.atomic_add(hist[T.cast(key, "int32")], 1, return_prev=True)
        if tx < 256:
            H[row, tx] = hist[tx]
            for i in T.serial(8):
                offset = 1 << i
                T.sync_threads(3, 256)
                if tx < 256 - offset:
                    v = hist[tx] + hist[tx + offset]
                T.sync_threads(3, 256)
                if tx < 256 - offset:
                    hist[tx] = v
        if tx < 256:
            S[row, tx] = hist[tx] + hist[256] - 7


def reference(x):
    bits = x.view(np.uint32)
    keys = np.where(x < 0, ~bits, bits | np.uint32(0x80000000)) >> 24
    hist = np.stack([np.bincount(k, minlength=256) for k in keys]).astype(np.int32)
    return hist, np.cumsum(hist[:, ::-1], axis=1)[:, ::-1].astype(np.int32), keys


def test_histogram_and_scan_in_the_interpreter():
    x = np.random.default_rng(0).standard_normal((4, 1024)).astype(np.float32)
    h, s = np.zeros((4, 256), np.int32), np.zeros((4, 256), np.int32)
    r = np.zeros((4, 1024), np.int32)
    tlc.interpret(radix_histogram, x, h, s, r)
    want_h, want_s, keys = reference(x)
    np.testing.assert_array_equal(h, want_h)
    np.testing.assert_array_equal(s, want_s)
    # Each key's slot: 0 .. count - 1, once each (the order is the atomics').
    for row in range(4):
        for k in np.unique(keys[row]):
            slots = np.sort(r[row][keys[row] == k])
            np.testing.assert_array_equal(slots, np.arange(len(slots)))


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_compiles(arch, tmp_path):
    ptx = tlc.compile(radix_histogram, target=arch).artifact["ptx"]
    assert re.search(r"bar(rier)?\.sync\s+15, 256", ptx)  # the program's barrier 3
    assert "atom.shared.add" in ptx or "atom.add" in ptx
    assemble(ptx, arch, tmp_path)


def test_region_fill_of_a_fragment_is_an_error():
    @T.prim_func
    def f(X: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            frag = T.alloc_fragment((64,), "float32")
            T.fill(frag[0:32], 1.0)
            T.copy(frag, X)

    with pytest.raises(tlc.CompilationError, match="only shared and local buffers and global "
                                                   "tensors are filled by region"):
        f.build_module()


def test_reinterpret_needs_the_same_width():
    @T.prim_func
    def f(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "int16")):
        with T.Kernel(1, threads=64):
            t = T.get_thread_binding()
            Y[t] = T.reinterpret(X[t], T.int16)

    with pytest.raises(tlc.CompilationError, match=r"T.reinterpret of a float32 \(32 bits\) "
                                                   r"as int16 \(16 bits\): the widths must match"):
        f.build_module()
