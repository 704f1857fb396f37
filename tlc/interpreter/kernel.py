"""Interpreted kernels: what `@tlc.jit(interpret=True)` (or TLC_INTERPRET=1)
returns in place of compiled ones, called the same way."""

from __future__ import annotations

import functools

import numpy as np

from ..errors import CompilationError
from ..dtypes import BY_NAME
from .arguments import is_torch_tensor
from .launch import Program


class InterpretedKernel:
    """A tile program run by the interpreter: call it like a JITKernel, with
    numpy arrays or torch tensors (and `blocks=[...]` to run some blocks)."""

    def __init__(self, module, name: str | None = None, out_idx=None):
        self.program = Program(module, name)
        self._tile_ir = str(module)
        n = len(self.program.params)
        out_idx = [] if out_idx is None else [out_idx] if isinstance(out_idx, int) else out_idx
        for i in out_idx:
            if isinstance(i, bool) or not isinstance(i, int) or not -n <= i < n:
                raise CompilationError(f"out_idx {i!r} is not a parameter position of "
                                       f"{self.name}'s {n} parameters")
            if self.program.params[i % n].kind != "tensor":
                raise CompilationError(f"out_idx {i} names the scalar "
                                       f"'{self.program.params[i % n].name}'; outputs are "
                                       "tensors")
        self.out_idx = sorted({i % n for i in out_idx})
        if len(self.out_idx) != len(out_idx):
            raise CompilationError(f"out_idx {list(out_idx)} names a parameter twice")

    @property
    def name(self) -> str:
        return self.program.name

    def __call__(self, *args, blocks=None, stream=None):
        """Runs every block of the grid (or `blocks`, e.g. [(0, 0), (3, 1)]) on
        the CPU. Without out_idx, `args` are all the parameters and outputs are
        written in place; with it, `args` are the inputs and the outputs are
        allocated (NaN-filled floats, so unwritten elements show) and returned.
        `stream` is accepted for GPU code: the work is done when the call returns."""
        del stream  # nothing is asynchronous here
        if not self.out_idx:
            self.program.run(args, blocks)
            return None
        params = self.program.params
        n_in = len(params) - len(self.out_idx)
        if len(args) != n_in:
            from ..runtime import ArgumentError

            names = [p.name for i, p in enumerate(params) if i not in self.out_idx]
            raise ArgumentError(f"{self.name} takes {n_in} inputs ({', '.join(names)}); "
                                f"outputs {[params[i].name for i in self.out_idx]} are "
                                f"allocated and returned, got {len(args)} arguments")
        outputs = self._allocate(args)
        full, inputs, outs = [], iter(args), iter(outputs)
        for i in range(len(params)):
            full.append(next(outs) if i in self.out_idx else next(inputs))
        self.program.run(full, blocks)
        torch_input = next((a for a in args if is_torch_tensor(a)), None)
        if torch_input is not None:
            outputs = [_to_torch(o, params[i].dtype, torch_input.device)
                       for o, i in zip(outputs, self.out_idx)]
        return outputs[0] if len(outputs) == 1 else outputs

    def _allocate(self, inputs) -> list:
        """numpy arrays for the outputs, sized from the inputs' size symbols."""
        params = self.program.params
        symbols, it = {}, iter(inputs)
        for i, p in enumerate(params):
            if i in self.out_idx:
                continue
            arg = next(it)
            if p.kind == "tensor" and hasattr(arg, "shape") and len(arg.shape) == len(p.shape):
                for dim, size in zip(p.shape, arg.shape):
                    if isinstance(dim, str):
                        symbols.setdefault(dim, int(size))
        outputs = []
        for i in self.out_idx:
            p = params[i]
            shape = []
            for dim in p.shape:
                if not isinstance(dim, int) and dim not in symbols:
                    raise TypeError(f"cannot allocate output '{p.name}': its size "
                                    f"{dim or '?'} is not the size of any input")
                shape.append(dim if isinstance(dim, int) else symbols[dim])
            dtype = np.float32 if p.etype.round else \
                (np.dtype(f"uint{BY_NAME[p.dtype].bits}") if BY_NAME[p.dtype].kind == "u"
                 else p.etype.dtype)
            fill = np.nan if p.etype.is_float else 0
            outputs.append(np.full(shape, fill, dtype=dtype))
        return outputs

    def get_mlir(self, stage: str = "tile") -> str:
        """The tile IR the interpreter runs (the only stage an interpreted kernel has)."""
        if stage != "tile":
            raise ValueError(f"an interpreted kernel has only the 'tile' stage, not '{stage}' "
                             "(compile without interpret=True / TLC_INTERPRET for the others)")
        return self._tile_ir

    def get_kernel_source(self) -> str:
        raise self._not_compiled("has no PTX")

    def get_profiler(self, tensor_supply_type=None):
        raise self._not_compiled("cannot be timed on a GPU")

    def save(self, path: str) -> None:
        raise self._not_compiled("has no launchable artifact")

    def _not_compiled(self, what: str) -> RuntimeError:
        return RuntimeError(f"{self.name} is interpreted (interpret=True or TLC_INTERPRET=1) "
                            f"and {what}: compile it without interpreting for that")

    def __repr__(self) -> str:
        return f"<tlc.InterpretedKernel {self.name}>"


def _to_torch(array, dtype: str, device):
    import torch

    name = {"float8_e4m3": "float8_e4m3fn"}.get(dtype, dtype)
    return torch.from_numpy(array).to(device=device, dtype=getattr(torch, name))


class InterpretedFactory:
    """@tlc.jit(interpret=True) on a factory: each argument set builds (once) an
    InterpretedKernel from the @T.prim_func the factory returns."""

    def __init__(self, factory, out_idx=None):
        self.factory = factory
        self.out_idx = out_idx
        self._memory: dict = {}
        functools.update_wrapper(self, factory)

    def __call__(self, *args, **kwargs) -> InterpretedKernel:
        try:
            key = (args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self._memory:
            return self._memory[key]
        kernel = interpreted(self.factory(*args, **kwargs), self.out_idx, self.factory.__name__)
        if key is not None:
            self._memory[key] = kernel
        return kernel


def interpreted(source, out_idx=None, factory_name: str | None = None):
    """An InterpretedKernel of a @T.prim_func, or an InterpretedFactory of a factory."""
    from ..frontend import PrimFunc

    if isinstance(source, PrimFunc):
        return InterpretedKernel(source.build_module(), source.name, out_idx)
    if factory_name is not None:
        raise CompilationError(f"@tlc.jit factory '{factory_name}' must return a "
                               f"@T.prim_func, got {type(source).__name__}")
    return InterpretedFactory(source, out_idx)
