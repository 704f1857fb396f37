"""TMA tensor maps: the artifact's "tensor_maps", their argument checks and
their encoding.

A kernel that copies tiles with TMA (cp.async.bulk.tensor, sm_90) reads each
mapped tensor through a CUtensorMap: 128 opaque bytes that the host encodes
(cuTensorMapEncodeTiled) from the tensor's address, sizes and strides, and
passes as an extra kernel parameter (`.param .align 64 .b8 NAME[128]`, a
__grid_constant__; CUDA 13's nvcc writes `.align 128`, which the runtime's
128-byte aligned copies also satisfy). The artifact lists the maps in its metadata:

    "tensor_maps": [{"param": "A", "box": [128, 64], "swizzle": 128, "fill": "zero"}]

- "param": the name of a tensor parameter of the kernel;
- "box": the box (the tile one TMA copy moves), one size per dimension of the
  parameter, outermost first as in its "shape", each 1 to 256; rank 1 to 5;
- "swizzle": the shared memory swizzle in bytes, 0, 32, 64 or 128. The
  innermost box row, box[-1] * itemsize bytes, must be a multiple of 16 and,
  with a swizzle, at most the swizzle;
- "fill" (optional, default "zero"): what out-of-bounds elements read as; only
  "zero" for now.

"tensor_maps" may be absent or empty. The kernel's PTX parameters are all the
regular ones (tlc/runtime/args.py), then one 128-byte map per entry, in list
order. A map is a tiled one with no interleave, element strides 1 and L2
promotion 128 B (runtime/tlc_runtime.c says why). The tensor's dtype must have
a TMA data type (DATA_TYPES: not bool).

A call is refused (ArgumentError naming the argument, before any launch) when
TMA cannot map a mapped argument: a row stride (any stride but the innermost,
row-major) not a multiple of 16 bytes or not below 2^40 bytes, a size not
below 2^32, or no element at all while the grid is not empty. The stride of a
size-1 dimension is never used, so it is rounded up to a multiple of 16.
"""

from dataclasses import dataclass

from .args import Param, row_major
from .dtypes import DTYPES
from .errors import ArgumentError, ArtifactError

# CUtensorMapDataType of each dtype the artifact may name.
DATA_TYPES = {
    "uint8": 0, "int8": 0, "float8_e4m3fn": 0, "float8_e5m2": 0,
    "uint16": 1, "int16": 1, "uint32": 2, "int32": 3, "uint64": 4, "int64": 5,
    "float16": 6, "float32": 7, "float64": 8, "bfloat16": 9,
}
SWIZZLES = (0, 32, 64, 128)
FILLS = ("zero",)
MAX_RANK = 5
MAX_BOX = 256
_KEYS = ("param", "box", "swizzle", "fill")

# Limits of cuTensorMapEncodeTiled on the tensor itself.
STRIDE_ALIGNMENT = 16
MAX_STRIDE = 1 << 40
MAX_SIZE = 1 << 32


@dataclass(frozen=True)
class TensorMap:
    index: int  # position in the artifact's "tensor_maps", from 0
    param: Param  # the mapped tensor parameter
    box: tuple[int, ...]  # outermost first
    swizzle: int  # bytes
    data_type: int  # CUtensorMapDataType

    @property
    def itemsize(self) -> int:
        return DTYPES[self.param.dtype].itemsize

    def byte_strides(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The row-major strides in bytes of a tensor the map reads, outermost
        first. A size-1 dimension is never stepped over, so its stride is
        rounded up to what TMA accepts rather than refused."""
        size = self.itemsize
        strides = [s * size for s in row_major(shape)]
        for i, n in enumerate(shape[:-1]):
            if n == 1:
                strides[i] = -(-strides[i] // STRIDE_ALIGNMENT) * STRIDE_ALIGNMENT
        return tuple(strides)

    def check_arg(self, shape: tuple[int, ...], where: str) -> None:
        """ArgumentError unless TMA can map a row-major tensor of this shape (a
        tensor with no element is only refused at launch: see check_not_empty)."""
        if 0 in shape:
            return
        for dim, n in enumerate(shape):
            if n >= MAX_SIZE:
                raise ArgumentError(f"{where}: TMA needs every size to be below 2^32; shape "
                                    f"{tuple(shape)} has {n} in dim {dim}")
        strides = self.byte_strides(shape)
        for dim, s in enumerate(strides[:-1]):
            which = "row stride" if len(shape) == 2 else f"dim-{dim} stride"
            if s % STRIDE_ALIGNMENT:
                raise ArgumentError(
                    f"{where}: TMA needs every row stride to be a multiple of "
                    f"{STRIDE_ALIGNMENT} bytes; shape {tuple(shape)} {self.param.dtype} "
                    f"has a {which} of {s} bytes")
            if s >= MAX_STRIDE:
                raise ArgumentError(
                    f"{where}: TMA needs every stride to be below 2^40 bytes; shape "
                    f"{tuple(shape)} {self.param.dtype} has a {which} of {s} bytes")

    def check_not_empty(self, shape: tuple[int, ...], where: str) -> None:
        """ArgumentError for a mapped tensor with no element in a launch that
        happens (the grid is not empty): TMA cannot describe it."""
        if 0 in shape:
            raise ArgumentError(
                f"{where}: has shape {tuple(shape)}, no element, but the kernel reads it "
                f"with TMA, which cannot map an empty tensor (the grid is not empty)")

    def encode(self, rt, ptr: int, shape: tuple[int, ...], kernel: str):
        """The map's CUtensorMap for a tensor at `ptr` (a 128-byte ctypes array)."""
        return rt.encode_tensor_map(self.data_type, ptr, shape, self.byte_strides(shape),
                                    self.box, self.swizzle, kernel, self.param.name)


def parse(raw, params: tuple[Param, ...]) -> tuple[TensorMap, ...]:
    """The maps of an artifact's "tensor_maps" value (None when absent);
    ArtifactError naming the map and field when one is malformed."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ArtifactError(f"'tensor_maps' must be a list, got {raw!r}")
    by_name = {p.name: p for p in params}
    return tuple(_parse_one(i, m, by_name) for i, m in enumerate(raw))


def _parse_one(index: int, m, by_name: dict[str, Param]) -> TensorMap:
    where = f"tensor map {index}"
    if not isinstance(m, dict):
        raise ArtifactError(f"{where}: must be an object, got {m!r}")
    unknown = sorted(set(m) - set(_KEYS))
    if unknown:
        raise ArtifactError(f"{where}: unknown key(s) {unknown} (known: {', '.join(_KEYS)})")
    name = m.get("param")
    p = by_name.get(name) if isinstance(name, str) else None
    if p is None:
        raise ArtifactError(f"{where}: 'param' must name a parameter of the kernel, got {name!r}")
    where = f"tensor map {index} (param {name!r})"
    if p.kind != "tensor":
        raise ArtifactError(f"{where}: 'param' must be a tensor parameter, {name!r} is a scalar")
    data_type = DATA_TYPES.get(p.dtype)
    if data_type is None:
        raise ArtifactError(f"{where}: TMA cannot copy {p.dtype} elements")
    rank = len(p.shape)
    if not 1 <= rank <= MAX_RANK:
        raise ArtifactError(f"{where}: TMA maps tensors of rank 1 to {MAX_RANK}, "
                            f"{name!r} has rank {rank}")
    box = m.get("box")
    if not isinstance(box, list) or not all(
            isinstance(b, int) and not isinstance(b, bool) for b in box):
        raise ArtifactError(f"{where}: 'box' must be a list of ints, got {box!r}")
    if len(box) != rank:
        raise ArtifactError(f"{where}: 'box' {box} has {len(box)} sizes, but {name!r} has "
                            f"rank {rank} (shape {list(p.shape)})")
    if not all(1 <= b <= MAX_BOX for b in box):
        raise ArtifactError(f"{where}: 'box' sizes must be 1 to {MAX_BOX}, got {box}")
    swizzle = m.get("swizzle")
    if swizzle not in SWIZZLES or isinstance(swizzle, bool):
        raise ArtifactError(f"{where}: 'swizzle' must be one of {SWIZZLES} (bytes), "
                            f"got {swizzle!r}")
    fill = m.get("fill", "zero")
    if fill not in FILLS:
        raise ArtifactError(f"{where}: 'fill' must be one of {FILLS}, got {fill!r}")
    row = box[-1] * DTYPES[p.dtype].itemsize
    if row % 16:
        raise ArtifactError(f"{where}: the innermost box row is {box[-1]} {p.dtype} = {row} "
                            f"bytes; TMA needs a multiple of 16 bytes")
    if swizzle and row > swizzle:
        raise ArtifactError(f"{where}: the innermost box row is {box[-1]} {p.dtype} = {row} "
                            f"bytes, more than the {swizzle}-byte swizzle")
    return TensorMap(index, p, tuple(box), swizzle, data_type)


