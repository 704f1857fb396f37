"""TileLang's eager-JIT style: a @tlc.jit factory whose body is the kernel.

    @tlc.jit
    def scale(X, alpha: T.float32, block=128):
        N = T.const("N")                    # a size, taken from the tensors
        X: T.Tensor((N,), "float32")        # declares the parameter X
        Y = T.empty((N,), "float32")        # an output, allocated and returned
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            ...
        return Y

    y = scale(x, 2.0)                       # compiled for x's shape and dtype, cached
    kernel = scale.compile(N=4096)          # or compiled for given sizes

The factory's parameters are its tensors (declared in the body with
`name: T.Tensor(shape, dtype)`), its run-time scalars (annotated with a dtype
in the signature, `alpha: T.float32`) and compile-time values (the rest).
The kernel takes the tensors and scalars in signature order, then the
`T.empty` outputs. `T.const` sizes come from the tensors' shapes (or from
`.compile(...)`); `T.dynamic` sizes stay symbolic. One kernel is compiled per
set of compile-time values, sizes and dtypes, and kept in memory.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
from dataclasses import dataclass

from .errors import CompilationError, Diagnostic, SourceLocation


def _is_t_call(node, name: str) -> bool:
    """Whether `node` is a call of T.<name> (any module alias, or the bare name)."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == name) or \
        (isinstance(f, ast.Name) and f.id == name)


def is_eager(fn) -> bool:
    """Whether a factory is written in the eager style: its own body (not a
    nested @T.prim_func) has the `with T.Kernel(...)`."""
    from .frontend.prim_func import _find_def

    try:
        node = _find_def(fn, fn.__code__.co_filename)
    except (CompilationError, OSError, TypeError, SyntaxError):
        return False
    if not isinstance(node, ast.FunctionDef):  # a lambda: never eager
        return False
    return any(isinstance(s, ast.With) and any(_is_t_call(i.context_expr, "Kernel")
                                               for i in s.items) for s in node.body)


class _Declarations:
    """What an eager factory's body declares, read from its AST once."""

    def __init__(self, node: ast.FunctionDef, filename: str):
        self.filename = filename
        self.consts: list[str] = []
        self.tensors: dict[str, ast.AnnAssign] = {}
        self.outputs: list[tuple[str, ast.Assign]] = []
        self.body: list[ast.stmt] = []
        self.prelude: list[ast.Assign] = []  # assignments declarations may read
        params = [a.arg for a in node.args.args + node.args.kwonlyargs]
        last_decl = 0
        for i, stmt in enumerate(node.body):
            if isinstance(stmt, ast.AnnAssign) and stmt.value is None or \
                    isinstance(stmt, ast.Assign) and _is_t_call(stmt.value, "empty"):
                last_decl = i
        for i, stmt in enumerate(node.body):
            if isinstance(stmt, ast.Assign) and _is_t_call(stmt.value, "const"):
                self.consts += self._const_names(stmt)
            elif isinstance(stmt, ast.Assign) and _is_t_call(stmt.value, "empty"):
                if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                    raise self.error(stmt, "T.empty is assigned to one name: C = T.empty(...)")
                self.outputs.append((stmt.targets[0].id, stmt))
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is None:
                name = stmt.target.id if isinstance(stmt.target, ast.Name) else None
                if name not in params:
                    raise self.error(stmt, f"'{ast.unparse(stmt.target)}' is not a parameter of "
                                           f"'{node.name}': only parameters are declared with "
                                           "`name: T.Tensor(...)`")
                if name in self.tensors:
                    raise self.error(stmt, f"parameter '{name}' is declared twice")
                self.tensors[name] = stmt
            else:
                self.body.append(stmt)
                if isinstance(stmt, ast.Assign) and i < last_decl:
                    self.prelude.append(stmt)
        if self.body and isinstance(self.body[-1], ast.Return):
            self._check_return(self.body.pop())
        for stmt in self.body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Return) and sub.value is not None:
                    raise self.error(sub, "an eager @tlc.jit kernel returns only its T.empty "
                                          "outputs, at its end")

    def error(self, node, message: str) -> CompilationError:
        where = SourceLocation(self.filename, node.lineno, node.col_offset + 1)
        return CompilationError([Diagnostic(message, where)])

    def _const_names(self, stmt) -> list[str]:
        call = stmt.value
        if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Constant) \
                or not isinstance(call.args[0].value, str):
            raise self.error(call, "T.const takes one string of names: T.const(\"M, N\")")
        # "M, N" or, as TileLang also takes them, "M N"
        names = call.args[0].value.replace(",", " ").split()
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        targets = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(t, ast.Name) for t in targets) \
                or [t.id for t in targets] != names:
            raise self.error(stmt, f"assign T.const(\"{', '.join(names)}\") to the same names: "
                                   f"{', '.join(names)} = T.const(...)")
        return names

    def _check_return(self, stmt: ast.Return) -> None:
        value = stmt.value
        items = value.elts if isinstance(value, ast.Tuple) else [value] if value else []
        outputs = [name for name, _ in self.outputs]
        if not all(isinstance(i, ast.Name) for i in items) or \
                [i.id for i in items] not in ([], outputs):
            raise self.error(stmt, f"an eager @tlc.jit kernel returns its T.empty outputs "
                                   f"({', '.join(outputs) or 'none'}), in order")


def _tensor_info(value, name: str):
    """(shape, dtype name) of a tensor argument (torch, numpy, DLPack-style)."""
    from .language.types import dtype as DType
    from .runtime import ArgumentError

    shape, dt = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dt is None:
        raise ArgumentError(f"'{name}' is declared a tensor, got {type(value).__name__}")
    text = str(dt).removeprefix("torch.")
    try:
        return tuple(int(s) for s in shape), DType(getattr(dt, "name", text))
    except ValueError:
        raise ArgumentError(f"'{name}' has dtype {dt}, which tlc does not support") from None


class _SizeSymbol:
    """A T.const size while a call's tensors are matched to the declarations:
    `name` (None for a value computed from sizes, which binds nothing).
    Arithmetic on it gives such a computed value, so that the assignments
    before the declarations run; comparing it raises TypeError (a branch on a
    size is left to the kernel body)."""

    def __init__(self, name):
        self.name = name

    def _computed(self, *_):
        return _SizeSymbol(None)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _computed
    __floordiv__ = __rfloordiv__ = __truediv__ = __rtruediv__ = _computed
    __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = _computed
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _computed

    def _compare(self, *_):
        raise TypeError("a T.const size has no value while the call is bound")

    __lt__ = __le__ = __gt__ = __ge__ = _compare
    __bool__ = __index__ = __int__ = _compare

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


@dataclass
class EagerCall:
    """One call of an eager kernel: its bound arguments, tensor (shape, dtype)
    pairs, T.const sizes, tensor dtypes, the kernel's launch arguments (tensors
    and scalars in order) and its compile-time values."""

    values: dict
    infos: dict
    consts: dict
    dtypes: dict
    launch_args: list
    statics: dict


class EagerJITFactory:
    """A @tlc.jit factory in the eager style: call it with tensors (compiles
    per shape and dtype, launches, returns the outputs) or `.compile(...)` it."""

    def __init__(self, fn, options, out_idx=None, interpret: bool = False):
        from .frontend.prim_func import _closure_env, _find_def
        from .jit_options import user_error

        if out_idx is not None:
            raise user_error(f"out_idx is not used by the eager kernel '{fn.__name__}': its "
                             "outputs are the T.empty tensors it declares")
        self.fn = fn
        self.options = options
        self.interpret = interpret  # kernels run in tlc's interpreter (numpy or torch)
        self.filename = fn.__code__.co_filename
        self.node = _find_def(fn, self.filename)
        self.decl = _Declarations(self.node, self.filename)
        self.signature = inspect.signature(fn)
        # Names the function reads: the module-level values among them key the
        # kernels (a global set after the decorator, as TileLang's examples set
        # `M = 8192` below the kernel, is read when the kernel is built).
        self._names = sorted({n.id for n in ast.walk(self.node) if isinstance(n, ast.Name)})
        self._env = _closure_env(fn)  # builtins, globals and closure at decoration
        # The module-level names it reads (a closure's cell shadows a global).
        self._globals = [n for n in self._names if n not in fn.__code__.co_freevars]
        annotations = getattr(fn, "__annotations__", {}) or {}
        # `alpha: T.float32` is a launch argument; a Python type (`block_M: int
        # = 128`, `out_dtype: T.dtype = T.float16`) only hints a compile-time value.
        from .language.types import dtype as _dtype
        self.scalars = {n: a for n, a in annotations.items()
                        if n in self.signature.parameters and n not in self.decl.tensors
                        and isinstance(a, _dtype)}
        self.runtime = [n for n in self.signature.parameters
                        if n in self.decl.tensors or n in self.scalars]
        self._kernels: dict = {}
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    @property
    def out_idx(self) -> list[int] | None:
        """The kernel's outputs: the T.empty tensors, after the launch arguments."""
        n = len(self.runtime)
        return list(range(n, n + len(self.decl.outputs))) or None

    # -- the two ways in --------------------------------------------------------

    def __call__(self, *args, **kwargs):
        """Compiles (once per shape, dtype and compile-time values) and launches;
        returns the T.empty outputs (one tensor, a list, or None)."""
        call = self.bind(args, kwargs)
        kernel = self.kernel_for(call.values, call.consts, call.dtypes, call.infos)
        return kernel(*call.launch_args)

    def bind(self, args, kwargs) -> EagerCall:
        """A call's arguments sorted out: compile-time values, sizes, dtypes."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__name__}: {e}") from None
        bound.apply_defaults()
        values = dict(bound.arguments)
        for name, v in values.items():
            if name not in self.runtime and hasattr(v, "shape") and hasattr(v, "dtype"):
                from .runtime import ArgumentError

                raise ArgumentError(f"{self.__name__}: '{name}' got a tensor but is not "
                                    f"declared one: add `{name}: T.Tensor(shape, dtype)` to "
                                    "the body")
        infos = {n: _tensor_info(values[n], n) for n in self.decl.tensors}
        consts = self._consts_from(infos, values)
        return EagerCall(values, infos, consts, {n: i[1] for n, i in infos.items()},
                         [values[n] for n in self.runtime],
                         {n: v for n, v in values.items() if n not in self.runtime})

    def check(self, call: EagerCall, statics: dict) -> None:
        """The call's tensors match the declarations under these compile-time values."""
        self._check_args(self._specs(self._decl_env(statics, call.consts)), call.infos)

    def compile(self, **kwargs):
        """The kernel for these T.const sizes and compile-time parameters (no
        tensors needed): `kernel = f.compile(M=1024, N=1024, block=128)`."""
        call = self.compile_call(kwargs)
        return self.kernel_for(call.statics, call.consts, {}, {})

    def get_kernel_source(self, *args, **kwargs) -> str:
        """The PTX of `.compile(**kwargs)`'s kernel (TileLang's
        `f.get_kernel_source(M=1024, ...)`), or, given the call's arguments with its
        tensors (`f.get_kernel_source(q, kv, ...)`), of the kernel that call would launch
        (compiled, not launched)."""
        if not args:
            return self.compile(**kwargs).get_kernel_source()
        call = self.bind(args, kwargs)
        return self.kernel_for(call.values, call.consts, call.dtypes,
                               call.infos).get_kernel_source()

    def compile_call(self, kwargs: dict, tuned: tuple = ()) -> EagerCall:
        """`.compile(**kwargs)`'s arguments sorted out as a call without
        tensors: its sizes, and its compile-time values with defaults (the
        parameters in `tuned`, which an autotuner fills, may be left out)."""
        kwargs = dict(kwargs)
        consts = {n: kwargs.pop(n) for n in list(kwargs) if n in self.decl.consts}
        missing = [n for n in self.decl.consts if n not in consts]
        if missing:
            raise TypeError(f"{self.__name__}.compile needs the sizes {', '.join(missing)}")
        for name, v in consts.items():
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise TypeError(f"{self.__name__}.compile: {name} must be a positive int, "
                                f"got {v!r}")
        given = [n for n in kwargs if n in self.runtime]
        if given:
            raise TypeError(f"{self.__name__}.compile: {given[0]} is a kernel argument, given "
                            "at launch")
        values = {}
        for name, p in self.signature.parameters.items():
            if name in self.runtime:
                continue
            if name in kwargs:
                values[name] = kwargs.pop(name)
            elif p.default is not inspect.Parameter.empty:
                values[name] = p.default
            elif name not in tuned:
                raise TypeError(f"{self.__name__}.compile needs the parameter '{name}'")
        if kwargs:
            raise TypeError(f"{self.__name__}.compile has no parameter or size "
                            f"'{next(iter(kwargs))}'")
        return EagerCall(values, {}, consts, {}, None, values)

    @property
    def env(self) -> dict:
        """The factory's globals and closure, the module-level names the
        function reads as they are now (a fresh dict)."""
        g = self.fn.__globals__
        env = dict(self._env)
        env.update({n: g[n] for n in self._globals if n in g})
        return env

    def _globals_key(self) -> tuple:
        """The plain values (numbers, strings) of the module-level names the
        function reads, as they are now: a kernel built for other values is
        another kernel."""
        g = self.fn.__globals__
        return tuple((n, g[n]) for n in self._globals
                     if n in g and isinstance(g[n], (bool, int, float, str)))

    # -- sizes --------------------------------------------------------------------

    def _decl_env(self, values: dict, consts: dict) -> dict:
        """Where declarations are evaluated: the factory's globals and closure,
        its compile-time values, the sizes, and the plain-Python assignments
        before the declarations (`VD = H * D`, `m = T.dynamic("m")`); an
        assignment Python cannot run here (T.rsqrt of a size) is left to the
        kernel body, where it is compiled as usual."""
        env = self.env
        env.update({n: v for n, v in values.items() if n not in self.runtime})
        env.update(consts)
        for stmt in self.decl.prelude:
            try:
                exec(compile(ast.fix_missing_locations(ast.Module([stmt], [])),
                             self.filename, "exec"), env)
            except Exception:
                pass
        return env

    def _consts_from(self, infos: dict, values: dict) -> dict:
        """T.const sizes read from the tensors' shapes, agreeing everywhere."""
        from .runtime import ArgumentError

        consts: dict[str, int] = {}
        declared = self._declared_dims(values)
        for name in self.decl.tensors:
            dims = declared[name]
            shape = infos[name][0]
            if dims is None:
                continue
            if len(dims) != len(shape):
                raise ArgumentError(f"'{name}' is declared with {len(dims)} dimensions, got a "
                                    f"tensor of shape {list(shape)}")
            for d, size in zip(dims, shape):
                if isinstance(d, _SizeSymbol) and d.name is not None:
                    if consts.setdefault(d.name, size) != size:
                        raise ArgumentError(f"{d.name} is {consts[d.name]} from an earlier "
                                            f"tensor but {size} in '{name}' (shape "
                                            f"{list(shape)})")
        missing = [c for c in self.decl.consts if c not in consts]
        if missing:
            raise ArgumentError(f"{self.__name__}: the size {missing[0]} is not a dimension of "
                                "any tensor argument; give it with .compile(...)")
        return consts

    def _declared_dims(self, values: dict) -> dict:
        """Each tensor declaration's shape with the T.const sizes as symbols
        (None where it cannot be read): the assignments before the
        declarations run on the symbols, so that a size reached through
        another name (`KH = K`) or a shape computed first (`q_shape = [batch,
        1, heads, dim]`, `T.Tensor(q_shape, dt)`) binds like a size written in
        the declaration; a dimension computed from a size (`H * 2`) binds
        nothing."""
        env = self._decl_env(values, {n: _SizeSymbol(n) for n in self.decl.consts})
        dims = {}
        for name, stmt in self.decl.tensors.items():
            shape = self._shape_ast(stmt)
            value = None
            if shape is not None:
                try:
                    value = eval(compile(ast.fix_missing_locations(ast.Expression(
                        copy.deepcopy(shape))), self.filename, "eval"), dict(env))
                except Exception:
                    value = None
            if isinstance(value, (list, tuple)):
                dims[name] = list(value)
            elif isinstance(value, (_SizeSymbol, int)):
                dims[name] = [value]
            else:  # not evaluable here: the sizes the declaration names itself
                ast_dims = self._dims_ast(stmt, self.decl.consts)
                dims[name] = None if ast_dims is None else [
                    _SizeSymbol(d.id) if isinstance(d, ast.Name) and d.id in self.decl.consts
                    else None for d in ast_dims]
        return dims

    @staticmethod
    def _shape_ast(stmt: ast.AnnAssign):
        """The shape argument of `T.Tensor(shape, dt)` / `T.Tensor[shape, dt]`, or None."""
        ann = stmt.annotation
        if isinstance(ann, ast.Call) and ann.args:
            return ann.args[0]
        if isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple) \
                and ann.slice.elts:
            return ann.slice.elts[0]
        return None

    @classmethod
    def _dims_ast(cls, stmt: ast.AnnAssign, consts=()):
        """The shape entries of `T.Tensor((d, ...), dt)` / `T.Tensor[(d, ...), dt]` (or of a
        single T.const size `T.Tensor((n), dt)`), or None."""
        shape = cls._shape_ast(stmt)
        if isinstance(shape, (ast.Tuple, ast.List)):
            return list(shape.elts)
        # One size (`T.Tensor((n), dt)`, parenthesized but no tuple); a shape computed
        # before (`T.Tensor(q_shape, dt)`) is read by evaluating it (_declared_dims).
        return [shape] if isinstance(shape, ast.Name) and shape.id in consts else None

    # -- building and compiling ----------------------------------------------------

    def _specs(self, env: dict) -> dict:
        """Each tensor declaration and T.empty output as a T.Tensor."""
        from .language.types import Tensor

        specs = {}
        stmts = [(n, s, s.annotation) for n, s in self.decl.tensors.items()]
        stmts += [(n, s, s.value) for n, s in self.decl.outputs]
        for name, stmt, expr in stmts:
            if isinstance(expr, ast.Call) and _is_t_call(expr, "empty"):
                expr = ast.Call(func=ast.Name("__tlc_Tensor__", ast.Load()), args=expr.args,
                                keywords=expr.keywords)
            try:
                code = compile(ast.fix_missing_locations(ast.Expression(
                    copy.deepcopy(expr))), self.filename, "eval")
                # Earlier declarations by name: `T.empty((M, N), A.dtype)`.
                spec = eval(code, {**env, **specs, "__tlc_Tensor__": Tensor})
            except Exception as e:
                raise self.decl.error(stmt, f"cannot evaluate the declaration of '{name}': "
                                            f"{type(e).__name__}: {e}") from None
            if not isinstance(spec, Tensor):
                raise self.decl.error(stmt, f"'{name}' must be declared T.Tensor(shape, dtype), "
                                            f"got {spec!r}")
            specs[name] = spec
        return specs

    def kernel_for(self, values: dict, consts: dict, dtypes: dict, infos: dict | None = None):
        """The kernel for these compile-time values, sizes and dtypes (compiled
        once, then kept); tensors in `infos` are checked against the declarations."""
        from .jit import _compile_source, _default_target

        target = self.options.resolve_target(_default_target())
        statics = [(n, v) for n, v in values.items() if n not in self.runtime]
        try:
            key = (tuple(statics), tuple(sorted(consts.items())),
                   tuple(sorted((n, str(d)) for n, d in dtypes.items())), target,
                   self._globals_key())
            hash(key)
        except TypeError:
            key = repr(key)
        kernel = self._kernels.get(key)
        if kernel is None:
            env = self._decl_env(values, consts)
            specs = self._specs(env)
            self._check_args(specs, infos or {})
            prim = self._prim_func(specs, env)
            if self.interpret:  # @tlc.jit(interpret=True) / TLC_INTERPRET=1: run on the CPU
                from .interpreter.kernel import InterpretedKernel

                kernel = InterpretedKernel(prim.build_module(), prim.name, self.out_idx)
            else:
                kernel = _compile_source(prim, self.out_idx, target, None)
                from .jit_options import report

                report(self.options, kernel, "compiled")
            self._kernels[key] = kernel
        return kernel

    def _check_args(self, specs: dict, infos: dict) -> None:
        """Tensors match their declarations (dtypes, and sizes that are not T.const)."""
        from .language.types import SymbolicDim
        from .runtime import ArgumentError

        for name, (shape, dt) in infos.items():
            spec = specs[name]
            # The interpreter holds bfloat16 and float8 values in float32 arrays
            # (numpy has neither), rounding them to the declared type.
            held = self.interpret and dt == "float32" and (
                str(spec.dtype) == "bfloat16" or str(spec.dtype).startswith("float8"))
            if spec.dtype != dt and not held:
                raise ArgumentError(f"'{name}' is declared {spec.dtype}, got a {dt} tensor")
            for d, size in zip(spec.shape, shape):
                if not isinstance(d, SymbolicDim) and d != size:
                    raise ArgumentError(f"'{name}' is declared with shape "
                                        f"{[getattr(x, 'name', x) for x in spec.shape]}, got "
                                        f"{list(shape)}")

    def _prim_func(self, specs: dict, env: dict):
        from .frontend.prim_func import PrimFunc

        node = copy.copy(self.node)
        args = []
        for name in self.runtime + [n for n, _ in self.decl.outputs]:
            where = self.decl.tensors.get(name) or dict(self.decl.outputs).get(name) or \
                next(a for a in self.node.args.args if a.arg == name)
            arg = ast.arg(arg=name, annotation=ast.Name(id="__tlc_spec__", ctx=ast.Load()))
            arg.lineno, arg.col_offset = where.lineno, where.col_offset
            args.append(arg)
        node.args = ast.arguments(posonlyargs=[], args=args, vararg=None, kwonlyargs=[],
                                  kw_defaults=[], kwarg=None, defaults=[])
        node.body = list(self.decl.body)
        node.decorator_list = []
        prim = PrimFunc(self.fn, node, self.filename, {**vars(builtins), **env})
        prim.annotations = {n: specs.get(n, self.scalars.get(n)) for n in
                            self.runtime + [n for n, _ in self.decl.outputs]}
        return prim

    def __repr__(self) -> str:
        return f"<tlc eager kernel factory {self.__name__}>"
