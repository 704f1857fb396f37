"""A torch stand-in for compiling TileLang examples without a GPU: tensors carry a shape and a
dtype name (what tlc's eager binding reads); everything else is a MagicMock."""
import sys, types
from unittest import mock

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "bool", "float8_e4m3fn", "float8_e5m2"]


class FakeDtype(str):
    @property
    def name(self):
        return str(self)

    @property
    def itemsize(self):
        return {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}.get(str(self), 4)

    @property
    def is_floating_point(self):
        return str(self).startswith(("float", "bfloat"))


def _shape(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    out = []
    for a in args:
        if isinstance(a, (tuple, list)):
            out.extend(int(x) for x in a)
        else:
            out.append(int(a))
    return tuple(out)


class FakeTensor:
    def __init__(self, shape, dtype="float32"):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = FakeDtype(str(dtype).removeprefix("torch."))
        self.device = "cuda"
        self.ndim = len(self.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def _same(self, *a, **k):
        return self

    cuda = contiguous = requires_grad_ = detach = clone = zero_ = fill_ = uniform_ = _same
    normal_ = float_ = _same

    def to(self, *a, **k):
        d = k.get("dtype") or next((x for x in a if isinstance(x, FakeDtype)), None)
        return FakeTensor(self.shape, d) if d else self

    def half(self):
        return FakeTensor(self.shape, "float16")

    def float(self):
        return FakeTensor(self.shape, "float32")

    def bfloat16(self):
        return FakeTensor(self.shape, "bfloat16")

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], FakeDtype):
            return FakeTensor(self.shape, shape[0])
        shape = list(_shape(shape))
        if -1 in shape:
            rest = 1
            for s in shape:
                if s != -1:
                    rest *= s
            shape[shape.index(-1)] = self.numel() // rest
        return FakeTensor(shape, self.dtype)

    reshape = view

    def transpose(self, a, b):
        s = list(self.shape)
        s[a], s[b] = s[b], s[a]
        return FakeTensor(s, self.dtype)

    def permute(self, *dims):
        dims = _shape(dims)
        return FakeTensor([self.shape[d] for d in dims], self.dtype)

    def data_ptr(self):
        return 0

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: self  # tensor methods keep the tensor (shape, dtype)

    def item(self):
        return 1

    def tolist(self):
        return []

    def __int__(self):
        return 1

    __index__ = __int__

    def __float__(self):
        return 1.0

    def __bool__(self):
        return True

    def __iter__(self):
        return iter([])

    def __getitem__(self, k):
        return self

    def _cmp(self, other):
        return self

    __lt__ = __le__ = __gt__ = __ge__ = _cmp

    def __setitem__(self, k, v):
        pass

    def __len__(self):
        return self.shape[0]

    def _op(self, *a):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _op
    __matmul__ = __neg__ = __pow__ = _op


def _maker(default="float32"):
    def make(*shape, dtype=None, device=None, **k):
        return FakeTensor(_shape(shape), dtype or default)
    return make


def _like(t, dtype=None, **k):
    return FakeTensor(t.shape, dtype or t.dtype)


torch = mock.MagicMock(name="torch")
torch.__version__ = "2.11.0"
torch.__file__ = "<fake torch>"
for d in DTYPES:
    setattr(torch, d, FakeDtype(d))
torch.half, torch.float, torch.int = FakeDtype("float16"), FakeDtype("float32"), FakeDtype("int32")
torch.Tensor = FakeTensor
torch.dtype = FakeDtype
for n in ["randn", "rand", "empty", "zeros", "ones", "randint_like"]:
    setattr(torch, n, _maker())
torch.full = lambda shape, value, dtype=None, **k: FakeTensor(_shape([shape]), dtype or "float32")
torch.randint = lambda low, high=None, size=None, dtype=None, **k: FakeTensor(
    _shape([size if size is not None else high]), dtype or "int64")
torch.arange = lambda *a, dtype=None, **k: FakeTensor((int(a[-1] if len(a) < 3 else a[1]),),
                                                      dtype or "int64")
for n in ["empty_like", "zeros_like", "ones_like", "randn_like", "rand_like"]:
    setattr(torch, n, _like)
def _tensor(data, dtype=None, **k):
    import numpy as np
    a = np.asarray(data)
    return FakeTensor(a.shape, dtype or ("int64" if a.dtype.kind in "iu" else "float32"))


torch.tensor = _tensor
torch.cuda.get_device_capability = lambda *a: (9, 0)
torch.cuda.is_available = lambda: True
class _Function:
    """torch.autograd.Function: subclasses define forward/backward; apply runs forward."""

    @classmethod
    def apply(cls, *args):
        return cls.forward(mock.MagicMock(name="ctx"), *args)


torch.autograd.Function = _Function
sys.modules["torch"] = torch
for sub in ["torch.nn", "torch.nn.functional", "torch.cuda", "torch.autograd", "torch.utils",
            "torch.utils.dlpack", "torch.testing", "torch.distributed"]:
    sys.modules[sub] = getattr(torch, sub.split(".", 1)[1].replace(".", "_"), mock.MagicMock())
