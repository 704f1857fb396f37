"""Finds the affine map of a (thread, register) -> element table.

A #tile.layout is an affine map `(d0, d1) -> (c0, ..., cn-1)` from a thread
`d0` and a register `d1` to the element they hold. Given the table of every
slot's element (from a TileLang `T.Fragment`, which is written the other way
round), `fit_map` looks for such a map of one shape: each coordinate is a
constant plus a sum of digit terms of the thread and of the register,

    c_k = base + sum_i w_i * ((d0 floordiv s_i) mod m_i)
               + sum_j v_j * ((d1 floordiv s_j) mod m_j)

where the digits (s, m) of each index are a mixed-radix decomposition of its
range (s_0 = 1, s_i+1 = s_i * m_i). Bit fields are the power-of-two case:
`(d0 floordiv 4) mod 8` is lane bits 2-4. This covers the blocked and tensor
core layouts, transposes, cyclic distributions and replication; a table of
another kind (a coordinate that mixes thread and register, such as
`(d0 + d1) mod 8`) has no fit, and the caller says so.

Each coordinate is fitted on its own: first split into a thread part and a
register part (`c(t, r) = c(0, 0) + (c(t, 0) - c(0, 0)) + (c(0, r) - c(0, 0))`,
checked on every slot), then each part digit by digit from the lowest
stride: at stride s the digit's weight is f(s) and its radix the longest run
of f(k * s) = k * f(s) (cut to a divisor of what is left of the range). The
fit is exact or none: the map found is evaluated on every slot and compared.
"""

from __future__ import annotations

import numpy as np


def _divisor_at_most(n: int, limit: int) -> int:
    """The largest divisor of n that is at most limit."""
    for m in range(min(n, limit), 0, -1):
        if n % m == 0:
            return m
    return 1


def digits(f: np.ndarray) -> list[tuple[int, int, int]] | None:
    """(stride, radix, weight) digits whose terms sum to f (f[0] == 0), or None."""
    n = f.size
    found, s = [], 1
    while s < n:
        left = n // s
        w = int(f[s])
        run = 2
        while run < left and int(f[run * s]) == run * w:
            run += 1
        m = _divisor_at_most(left, run)
        if m == 1:
            return None
        found.append((s, m, w))
        s *= m
    total = np.zeros(n, dtype=np.int64)
    index = np.arange(n)
    for s, m, w in found:
        total += w * ((index // s) % m)
    return found if np.array_equal(total, f) else None


def _term(dim: str, size: int, s: int, m: int, w: int) -> str:
    x = dim if s == 1 else f"{dim} floordiv {s}"
    if s * m < size:  # the top digit needs no mod: the index stays below its range
        x = f"{x} mod {m}" if s == 1 else f"({x}) mod {m}"
    if w == 1:
        return x
    return f"{x} * {w}" if x == dim else f"({x}) * {w}"


def fit_coordinate(c: np.ndarray) -> str | None:
    """The affine expression of d0 (thread) and d1 (register) giving c[t, r]."""
    base = int(c[0, 0])
    along_t = c[:, 0] - base
    along_r = c[0, :] - base
    if not np.array_equal(c, base + along_t[:, None] + along_r[None, :]):
        return None
    terms = []
    for dim, f in (("d0", along_t), ("d1", along_r)):
        found = digits(f)
        if found is None:
            return None
        terms += [_term(dim, f.size, s, m, w) for s, m, w in found if w]
    if base or not terms:
        terms.append(str(base))
    return " + ".join(terms)


def fit_map(coords: np.ndarray) -> str | None:
    """`(d0, d1) -> (...)` reproducing coords[t, r, k] (coordinate k of the
    element register r of thread t holds), or None where no map of this
    shape does."""
    exprs = [fit_coordinate(coords[:, :, k]) for k in range(coords.shape[2])]
    if any(e is None for e in exprs):
        return None
    return f"(d0, d1) -> ({', '.join(exprs)})"
