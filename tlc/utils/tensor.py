"""Tensors for tests and benchmarks (`tilelang.utils.tensor`): dtype names to
torch dtypes, inputs filled by a supply type, and a tolerant comparison.

torch is imported only when a function needs it; without it those functions
raise a RuntimeError that says so. `torch_assert_close` also compares numpy
arrays, so it works without torch.
"""

from __future__ import annotations

import enum


class TensorSupplyType(enum.Enum):
    """How inputs are filled: Integer (small integers in [-2, 2], exact in any
    dtype), Uniform (U(-1, 1)), Normal and Randn (N(0, 1)), Zero, One, Auto
    (Normal for floating dtypes, Integer for the rest)."""

    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


def _torch(what: str):
    try:
        import torch
    except ImportError:
        raise RuntimeError(f"{what} needs torch, which is not installed") from None
    return torch


_FP8 = {"float8_e4m3": "float8_e4m3fn", "float8_e4m3fn": "float8_e4m3fn",
        "float8_e5m2": "float8_e5m2"}


def map_torch_type(intype: str):
    """The torch dtype of a tile-language dtype name ("float16", "bfloat16",
    "float8_e4m3", "float", "int32", ... or a T.* dtype)."""
    from ..language.types import dtype as DType

    torch = _torch("map_torch_type")
    name = str(DType(intype))
    if name in _FP8:
        dt = getattr(torch, _FP8[name], None)
        if dt is None:
            raise RuntimeError(f"this torch ({torch.__version__}) has no {_FP8[name]}")
        return dt
    return getattr(torch, name)


def _shape_and_dtype(param):
    if isinstance(param, dict):
        shape, dtype = param["shape"], param["dtype"]
        name = param.get("name", "?")
    else:
        shape, dtype, name = param.shape, param.dtype, getattr(param, "name", "?")
    if any(not isinstance(d, int) for d in shape):
        raise ValueError(f"parameter '{name}' has symbolic sizes {list(shape)}: a supply "
                         "needs static shapes (make the tensors yourself)")
    return list(shape), dtype


def get_tensor_supply(supply_type: TensorSupplyType = TensorSupplyType.Integer,
                      device: str = "cuda"):
    """A function that makes one tensor for a parameter (a kernel's
    `params` entry, or anything with .shape and .dtype) filled by `supply_type`."""
    if not isinstance(supply_type, TensorSupplyType):
        raise TypeError(f"supply_type must be a TensorSupplyType, got {supply_type!r}")

    def supply(param):
        shape, dtype = _shape_and_dtype(param)
        torch = _torch("get_tensor_supply")
        dt = dtype if isinstance(dtype, torch.dtype) else map_torch_type(dtype)
        kind = supply_type
        floating = dt.is_floating_point
        if kind == TensorSupplyType.Auto:
            kind = TensorSupplyType.Normal if floating else TensorSupplyType.Integer
        if kind == TensorSupplyType.Zero:
            return torch.zeros(shape, device=device).to(dt)
        if kind == TensorSupplyType.One:
            return torch.ones(shape, device=device).to(dt)
        if dt == torch.bool:
            return torch.rand(shape, device=device) < 0.5
        if kind == TensorSupplyType.Integer or not floating:
            low = 0 if dt == torch.uint8 else -2
            return torch.randint(low, 3, shape, device=device).to(dt)
        if kind == TensorSupplyType.Uniform:
            return (torch.rand(shape, device=device) * 2 - 1).to(dt)
        return torch.randn(shape, device=device).to(dt)

    return supply


def _as_numpy(x):
    import numpy as np

    if hasattr(x, "detach"):  # torch: every dtype numpy lacks (bf16, fp8) goes through fp32
        x = x.detach().cpu()
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            return x.numpy()
        return x.float().numpy() if x.dtype.itemsize < 4 else x.numpy()
    return np.asarray(x)


def torch_assert_close(tensor_a, tensor_b, rtol: float = 1e-2, atol: float = 1e-3,
                       max_mismatched_ratio: float = 0.001, verbose: bool = False,
                       equal_nan: bool = True, check_device: bool = True,
                       check_dtype: bool = True, check_layout: bool = True,
                       check_stride: bool = False, base_name: str = "LHS",
                       eval_name: str = "RHS") -> None:
    """Asserts |a - b| <= atol + rtol * |b| for all but `max_mismatched_ratio`
    of the elements (TileLang's tolerant comparison). torch tensors are also
    checked for device, dtype, layout and (if asked) strides; numpy arrays and
    lists compare by value."""
    import numpy as np

    both_torch = hasattr(tensor_a, "detach") and hasattr(tensor_b, "detach")
    if both_torch:
        checks = [("device", check_device), ("dtype", check_dtype), ("layout", check_layout)]
        for attr, wanted in checks:
            if wanted and getattr(tensor_a, attr) != getattr(tensor_b, attr):
                raise AssertionError(f"{attr} differs: {base_name} {getattr(tensor_a, attr)}, "
                                     f"{eval_name} {getattr(tensor_b, attr)}")
        if check_stride and tensor_a.stride() != tensor_b.stride():
            raise AssertionError(f"strides differ: {base_name} {tensor_a.stride()}, "
                                 f"{eval_name} {tensor_b.stride()}")
    a, b = _as_numpy(tensor_a), _as_numpy(tensor_b)
    if a.shape != b.shape:
        raise AssertionError(f"shapes differ: {base_name} {a.shape}, {eval_name} {b.shape}")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    close = np.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    bad = int(close.size - np.count_nonzero(close))
    allowed = max_mismatched_ratio * close.size
    if verbose:
        print(f"torch_assert_close: {bad} of {close.size} elements beyond rtol={rtol}, "
              f"atol={atol} (allowed {allowed:g})")
    if bad > allowed:
        with np.errstate(invalid="ignore"):
            diff = np.abs(a64 - b64)
        worst = np.unravel_index(np.nanargmax(np.where(close, -1, diff)), close.shape) \
            if close.size else ()
        raise AssertionError(
            f"{bad} of {close.size} elements ({bad / close.size:.2%}) differ beyond "
            f"rtol={rtol}, atol={atol} (allowed {max_mismatched_ratio:.2%}); worst at "
            f"{tuple(int(i) for i in worst)}: {base_name}={a64[worst]}, "
            f"{eval_name}={b64[worst]}")
