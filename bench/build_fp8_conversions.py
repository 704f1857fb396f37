"""Compile GPU checks of fp8 conversions, on the hardware's cvt (sm_90a) and in
integer arithmetic (sm_80, which has no fp8 cvt; its PTX runs on any later GPU).

    python bench/build_fp8_conversions.py OUT_DIR

For each format (float8_e4m3fn, float8_e5m2) and target:
- widen_<fmt>_<arch>: every one of the 256 codes to float32, compared bit for
  bit with torch's conversion (the float32's bits, NaNs as 0);
- narrow_<fmt>_<arch>: 6144 float32 values (every fp8 value, the midpoints
  between neighbours and one float32 ulp either side, subnormals, values past
  the largest finite one, infinities, zeros, random magnitudes over the whole
  range) to fp8, compared bit for bit with torch's conversion of the values
  clamped to the largest finite fp8 (tlc's casts saturate, as cvt.rn.satfinite;
  torch's give NaN past the range). NaN inputs are left out (tlc keeps NaN;
  its byte differs from torch's by the sign).
Each also as `_pairs` on sm_90a: 32 threads, so each converts a run of 8
consecutive elements as one vector, two elements a cvt.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import save_checked  # noqa: E402

import tlc  # noqa: E402
import tlc.language as T  # noqa: E402

FORMATS = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0}
TARGETS = ("sm_90a", "sm_80")
N = 6144


def widen(fmt: str, threads: int = 256):
    @T.prim_func
    def widen_codes(X: T.Tensor((256,), "uint8"), Y: T.Tensor((256,), "int32")):
        with T.Kernel(1, threads=threads):
            for i in T.Parallel(256):
                v = T.cast(T.reinterpret(X[i], fmt), "float32")
                Y[i] = T.if_then_else(v != v, 0, T.reinterpret(v, "int32"))

    return widen_codes


def narrow(fmt: str, threads: int = 256):
    @T.prim_func
    def narrow_values(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "uint8")):
        with T.Kernel(N // 256, threads=threads) as bx:
            for i in T.Parallel(256):
                Y[bx * 256 + i] = T.reinterpret(T.cast(X[bx * 256 + i], fmt), "uint8")

    return narrow_values


def values(fmt: str, seed: int) -> list[float]:
    """The float32 inputs of narrow_<fmt>: every finite fp8 value of the format
    (decoded here from its bits), neighbours' midpoints and one ulp around them,
    past the range, specials, then random magnitudes, both signs; N of them."""
    mantissa, bias = (3, 7) if fmt == "float8_e4m3fn" else (2, 15)
    finite = []
    for code in range(128):
        e, m = code >> mantissa, code & ((1 << mantissa) - 1)
        if (fmt == "float8_e4m3fn" and code == 0x7F) or (fmt == "float8_e5m2" and e == 31):
            continue
        v = m * 2.0 ** (1 - bias - mantissa) if e == 0 else \
            (1 + m / 2 ** mantissa) * 2.0 ** (e - bias)
        finite.append(v)
    f = np.array(sorted(finite), np.float32)
    mid = ((f[:-1].astype(np.float64) + f[1:]) / 2).astype(np.float32)
    near = np.concatenate([mid, np.nextafter(mid, np.float32(np.inf)),
                           np.nextafter(mid, np.float32(0))])
    top = FORMATS[fmt]
    past = np.array([top * 1.03, top * 1.07, top * 1.2, top * 4, 3.0e38, np.inf], np.float32)
    tiny = np.array([0.0, 1e-30, 2.0 ** (-bias - mantissa - 1), 2.0 ** (-bias - mantissa)],
                    np.float32)
    fixed = np.concatenate([f, near, past, tiny])
    fixed = np.concatenate([fixed, -fixed])
    rng = np.random.default_rng(seed)
    rest = N - fixed.size
    rand = (rng.choice([-1.0, 1.0], rest) *
            np.exp2(rng.uniform(-bias - mantissa - 3, np.log2(top) + 2, rest))).astype(np.float32)
    return [float(x) for x in np.concatenate([fixed, rand])[:N]]


def narrowed(torch, x, fmt: str):
    """torch's conversion of `x` to `fmt`, clamped to the largest finite value
    first (tlc's casts saturate; torch's give NaN past the range), as bytes.
    (A function of a module: the check's expressions run without builtins,
    and torch's fp8 conversion imports on first use.)"""
    top = FORMATS[fmt]
    return x.clamp(-top, top).to(getattr(torch, fmt)).view(torch.uint8)


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for k, (fmt, top) in enumerate(FORMATS.items()):
        widen_check = {"inputs": {"X": "arange"},
                       "expect": {"Y": f"torch.where(X.view(torch.{fmt}).float().isnan(), 0, "
                                       f"X.view(torch.{fmt}).float().view(torch.int32))"},
                       "atol": 0, "rtol": 0, "seed": k}
        narrow_check = {"inputs": {"X": values(fmt, k)},
                        "modules": {"fp8": "bench/build_fp8_conversions.py"},
                        "expect": {"Y": f"fp8.narrowed(torch, X, '{fmt}')"},
                        "atol": 0, "rtol": 0, "seed": k}
        for arch in TARGETS:
            save_checked(tlc.compile(widen(fmt), target=arch).artifact, widen_check,
                         os.path.join(out, f"widen_{fmt}_{arch}.tlcart"))
            save_checked(tlc.compile(narrow(fmt), target=arch).artifact, narrow_check,
                         os.path.join(out, f"narrow_{fmt}_{arch}.tlcart"))
        save_checked(tlc.compile(widen(fmt, 32), target="sm_90a").artifact, widen_check,
                     os.path.join(out, f"widen_{fmt}_sm_90a_pairs.tlcart"))
        save_checked(tlc.compile(narrow(fmt, 32), target="sm_90a").artifact, narrow_check,
                     os.path.join(out, f"narrow_{fmt}_sm_90a_pairs.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
