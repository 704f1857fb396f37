"""The statement half of the frontend: a PrimFunc's AST -> tile IR.

Every op is built under the location of the AST node it comes from, so
verifier and pass errors name the user's file:line:col.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import inspect

from .. import ir
from ..dialects import arith, func, scf, tile
from ..errors import CompilationError, Diagnostic, SourceLocation
from ..language.types import OnChipBuffer, SymbolicDim, SymbolicExpr, Tensor, dtype as DType
from . import dtypes, loop_exits, reducers, thread_ranges, variables, warp_groups
from .expressions import ExpressionMixin
from .values import Affine, BufferRef, NoFlow, Scalar, VarRef, index_value


def _is_dtype_name(text: str) -> bool:
    try:
        DType(text)
        return True
    except ValueError:
        return False


class CodeGenerator(ExpressionMixin):
    """Walks one @T.prim_func and builds its func.func with a tile.kernel."""

    def __init__(self, prim, module: ir.Module):
        self.prim = prim
        self.module = module
        self.scopes: list[dict] = [{}]
        self.symbols: dict[str, Affine] = {}  # symbolic size name -> its memref.dim
        self.kernel = None  # the last tile.kernel op (built or being built)
        self.func = None  # the func.func being built
        self.scratch = 0  # T.alloc_global tensors so far (arguments after the parameters)
        self.grid_barriers: list = []  # (tile.kernel op, its T.sync_grid counter)
        self.in_kernel = False  # inside `with T.Kernel(...)`
        self.thread_dims = ()  # T.Kernel's threads, per dimension (x first)
        self.uses_thread_index = False  # T.get_thread_binding was called
        self.reducers: list = []  # the kernel's T.alloc_reducer buffers
        self.statement = None  # the statement being built (visit_body)
        self.parallel_depth = 0
        self.index_maps: dict = {}  # global BufferRef -> its T.Layout, in this kernel
        self.accessed: set = set()  # global buffers this kernel accessed so far
        self.outer_parallel = None  # the outermost tile.parallel being built
        # Run-time regions (scf.if branches, loops) being built: (kind, index of
        # their scope in self.scopes, line). Names bound inside one do not flow out.
        self.regions: list[tuple[str, int, int]] = []
        # The loops being built, innermost last, with their break / continue
        # flags (tlc.frontend.loop_exits).
        self.loops: list = []
        # Loop indices with compile-time bounds -> (first, last) value, for the
        # static bounds checks of on-chip buffer accesses.
        self.ranges: dict = {}
        # Integer scalars used as indices -> their index casts (ExpressionMixin.index_leaf).
        self.index_casts: dict = {}
        # The file and the Python names of the code being built: the prim_func's, or a
        # T.macro's while its body is built in place of a call (expand_macro).
        self.filename = prim.filename
        self.env = prim.env
        self.macros: list = []  # the T.macro calls being built, innermost last

    # -- diagnostics and locations ------------------------------------------

    def where(self, node) -> SourceLocation:
        return SourceLocation(self.filename, getattr(node, "lineno", 0),
                              getattr(node, "col_offset", -1) + 1)

    def error(self, node, message: str) -> CompilationError:
        return CompilationError([Diagnostic(message, self.where(node))])

    def loc(self, node) -> ir.Location:
        w = self.where(node)
        return ir.Location.file(w.file, w.line, max(w.col, 1))

    def assigned_name(self, value_node) -> str | None:
        """The name the statement being built assigns `value_node` to (`name =
        value` or `name: T = value`), else None."""
        stmt = self.statement
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
        elif isinstance(stmt, ast.AnnAssign):
            target = stmt.target
        else:
            return None
        return target.id if stmt.value is value_node and isinstance(target, ast.Name) else None

    # -- names ----------------------------------------------------------------

    def bind(self, name: str, value, node=None) -> None:
        loop = next((r for r in reversed(self.regions) if r[0] == "loop"), None)
        if loop is not None and node is not None:
            for scope in self.scopes[:loop[1]]:
                if name in scope and isinstance(scope[name], VarRef):
                    raise self.error(node, (
                        f"'{name}' is a T.alloc_var declared outside this run-time loop (line "
                        f"{loop[2]}): assign it ({name} = value) instead of declaring it "
                        "again, or use a new name"))
                if name in scope and not isinstance(scope[name], NoFlow):
                    raise self.error(node, (
                        f"'{name}' is defined outside this run-time loop (line {loop[2]}): "
                        "assigning it inside the loop would not carry its value to the next "
                        "iteration or out of the loop; keep the value in a T.alloc_var "
                        "(acc = T.alloc_var(\"float32\") before the loop, then acc += ...) "
                        "or use a new name"))
        self.scopes[-1][name] = value

    def lookup(self, name: str, node):
        for scope in reversed(self.scopes):
            if name in scope:
                value = scope[name]
                if isinstance(value, NoFlow):
                    raise self.error(node, value.message(name))
                return value
        if name in self.env:
            return self.env[name]
        raise self.error(node, f"name '{name}' is not defined")

    @contextlib.contextmanager
    def scope(self):
        self.scopes.append({})
        try:
            yield self.scopes[-1]
        finally:
            self.scopes.pop()

    @contextlib.contextmanager
    def region(self, kind: str, node, loop_vars=()):
        """A scope whose names do not flow out: `kind` is "if" (a branch of a
        run-time `if`) or "loop" (a run-time loop's body, T.Parallel's too).
        Names bound inside are poisoned after it, so a later use is an error
        instead of silently reading an older value."""
        with self.scope() as names:
            self.regions.append((kind, len(self.scopes) - 1, node.lineno))
            try:
                yield names
            finally:
                self.regions.pop()
        for name, value in names.items():
            self.scopes[-1][name] = NoFlow(kind, node.lineno, name in loop_vars,
                                            isinstance(value, VarRef))

    # -- the function --------------------------------------------------------

    def build(self) -> None:
        node = self.prim.node
        params = []
        for arg in node.args.args:
            if arg.annotation is None:
                raise self.error(arg, f"parameter '{arg.arg}' needs an annotation such as "
                                      "T.Tensor((M, N), \"float16\") or T.int32")
            spec = self.annotation(arg)
            params.append((arg, spec))
        if node.args.vararg or node.args.kwarg or node.args.kwonlyargs \
                or node.args.posonlyargs:
            raise self.error(node, "a prim_func takes plain positional parameters only")
        if node.args.defaults:
            raise self.error(node.args.defaults[0], "prim_func parameters cannot have default "
                                                    "values (every argument is passed at launch)")

        types, attrs = [], []
        for arg, spec in params:
            with self.loc(arg):
                types.append(self.param_type(arg, spec))
                attrs.append(self.param_attrs(arg, spec))
        with self.loc(node), ir.InsertionPoint(self.module.body):
            f = func.FuncOp(self.prim.name, (types, []))
            f.arg_attrs = ir.ArrayAttr.get(attrs)
            entry = f.add_entry_block()
        self.func = f
        with ir.InsertionPoint(entry):
            self.symbol_exprs = []  # (SymbolicExpr, the dimension's size)
            for (arg, spec), value in zip(params, entry.arguments):
                with self.loc(arg):
                    self.bind_param(arg.arg, spec, value)
            with self.loc(node):
                self.solve_symbol_exprs(node)
            body = node.body
            if body and isinstance(body[-1], ast.Return) and body[-1].value is None:
                body = body[:-1]  # a final bare `return`
            self.visit_body(body)
            if self.kernel is None:
                raise self.error(node, f"'{self.prim.name}' has no `with T.Kernel(...)`: a "
                                       "tile program launches one or more kernels")
            with self.loc(node):
                func.ReturnOp([])

    def annotation(self, arg):
        """A parameter's annotation: the value Python computed when the function
        was defined (it sees a factory's locals even when the body does not),
        else the annotation evaluated in the function's environment."""
        spec = self.prim.annotations.get(arg.arg)
        if spec is None or isinstance(spec, str) and not _is_dtype_name(spec):
            # Python evaluated the annotations when it ran the `def`, in the
            # scope they were written in (which the body's closure may lack).
            annotations = getattr(self.prim.fn, "__annotations__", {})
            spec = annotations.get(arg.arg)
            if spec is None or isinstance(spec, str):  # PEP 563 strings
                spec = self.eval_python(arg.annotation)
        if isinstance(spec, str) and not isinstance(spec, DType) and _is_dtype_name(spec):
            spec = DType(spec)
        return spec

    def param_type(self, arg, spec) -> ir.Type:
        if isinstance(spec, Tensor):
            dyn = ir.ShapedType.get_dynamic_size()
            shape = [d if isinstance(d, int) else dyn for d in spec.shape]
            strides = getattr(spec, "strides", None)
            if strides is None:
                return ir.MemRefType.get(shape, dtypes.storage_type(spec.dtype))
            layout = ir.StridedLayoutAttr.get(0, [s if isinstance(s, int) else dyn
                                                  for s in strides])
            return ir.MemRefType.get(shape, dtypes.storage_type(spec.dtype), layout=layout)
        if isinstance(spec, DType) or spec in (int, float, bool):
            return dtypes.mlir_type(self.scalar_dtype(spec))
        if isinstance(spec, OnChipBuffer):
            raise self.error(arg, f"parameter '{arg.arg}': T.{spec.kind} annotates a T.macro's "
                                  "parameter; a kernel's tensors are T.Tensor(shape, dtype)")
        raise self.error(arg, f"parameter '{arg.arg}': expected T.Tensor(shape, dtype) or a "
                              f"scalar dtype, got {spec!r}")

    @staticmethod
    def scalar_dtype(spec) -> str:
        return {int: "int32", float: "float32", bool: "bool"}.get(spec, spec)

    def param_attrs(self, arg, spec) -> ir.DictAttr:
        attrs = {"tile.name": ir.StringAttr.get(arg.arg)}
        dt = spec.dtype if isinstance(spec, Tensor) else self.scalar_dtype(spec)
        if dtypes.needs_tag(dt):
            attrs["tile.dtype"] = ir.StringAttr.get(dt)
        if isinstance(spec, Tensor):
            attrs["tile.dims"] = ir.ArrayAttr.get([
                ir.StringAttr.get(d.name if isinstance(d, SymbolicDim) else "")
                for d in spec.shape])
            if getattr(spec, "strides", None) is not None:
                attrs["tile.strides"] = ir.ArrayAttr.get([
                    ir.StringAttr.get(s.name if isinstance(s, SymbolicDim) else "")
                    for s in spec.strides])
        return ir.DictAttr.get(attrs)

    def bind_param(self, name: str, spec, value: ir.Value) -> None:
        if not isinstance(spec, Tensor):
            self.bind(name, Scalar(value, self.scalar_dtype(spec)))
            return
        from ..dialects import memref

        shape = []
        for i, d in enumerate(spec.shape):
            if isinstance(d, int):
                shape.append(d)
            elif isinstance(d, SymbolicExpr):
                # Its own size (the launcher checks it against the expression);
                # a symbol only such dimensions give is solved from it (below).
                dim = Affine.leaf(memref.dim(value, arith.constant(ir.IndexType.get(), i)))
                self.symbol_exprs.append((d, dim))
                shape.append(dim)
            else:
                if d.name not in self.symbols:
                    dim = memref.dim(value, arith.constant(ir.IndexType.get(), i))
                    self.symbols[d.name] = Affine.leaf(dim)
                shape.append(self.symbols[d.name])
        strides = [(i, st) for i, st in enumerate(getattr(spec, "strides", None) or ())
                   if isinstance(st, SymbolicDim) and st.name not in self.symbols]
        if strides:  # T.StridedTensor's stride symbols, from the argument's descriptor
            meta = memref.ExtractStridedMetadataOp(value)
            for i, st in strides:
                self.symbols.setdefault(st.name, Affine.leaf(meta.strides[i]))
        self.bind(name, BufferRef(name, value, shape, spec.dtype, "global"))

    def solve_symbol_exprs(self, node) -> None:
        """Symbols no plain dimension gives, from dimensions linear in one
        symbol with int constants (`c * s`, `s + c`, `s - c`, `c - s`, nested:
        `n * 3 + 1` gives n = (size - 1) // 3; the launcher checks that the
        size is one the expression takes)."""
        for expr, dim in self.symbol_exprs:
            solved = self._invert_size(expr, dim, node)
            if solved is not None and solved[0].name not in self.symbols:
                self.symbols[solved[0].name] = solved[1]

    def _invert_size(self, expr, value, node):
        """(symbol, its value) where `expr` of that one symbol equals `value`,
        or None where `expr` is not of that form."""
        if type(expr) is SymbolicDim:
            return expr, value
        if not isinstance(expr, SymbolicExpr) or expr.op not in ("*", "+", "-"):
            return None
        const = lambda x: isinstance(x, int) and not isinstance(x, bool)  # noqa: E731
        if const(expr.rhs) and isinstance(expr.lhs, SymbolicDim):
            inner, c, left = expr.lhs, expr.rhs, True
        elif const(expr.lhs) and isinstance(expr.rhs, SymbolicDim):
            inner, c, left = expr.rhs, expr.lhs, False
        else:
            return None
        if expr.op == "*":
            if c <= 0:
                return None
            value = self.binop(ast.FloorDiv(), value, c, node)
        elif expr.op == "+":
            value = self.binop(ast.Sub(), value, c, node)
        elif left:  # s - c = size: s = size + c
            value = self.binop(ast.Add(), value, c, node)
        else:  # c - s = size: s = c - size
            value = self.binop(ast.Sub(), c, value, node)
        return self._invert_size(inner, value, node)

    def eval_python(self, node):
        """Evaluates an annotation as plain Python in the function's environment."""
        try:
            expr = ast.Expression(node)
            return eval(compile(expr, self.prim.filename, "eval"), dict(self.prim.env))
        except CompilationError:
            raise  # e.g. a T.Tensor mistake, already at its line
        except Exception as e:
            hint = (" (with `from __future__ import annotations`, annotations are evaluated "
                    "late, where only the function's globals and closure are visible)"
                    if isinstance(e, NameError) else "")
            raise self.error(node, f"cannot evaluate this annotation: {type(e).__name__}: "
                                   f"{e}{hint}") from None

    # -- statements ---------------------------------------------------------

    def visit_body(self, stmts) -> None:
        for n, stmt in enumerate(stmts):
            self.statement = stmt
            self.var_reads = {}  # (variables.read: one read per statement)
            with self.loc(stmt):
                try:
                    self.visit_stmt(stmt)
                    if n + 1 < len(stmts) and loop_exits.may_exit(self, stmt):
                        # A `break` / `continue` may have run: the rest only if not.
                        guard = loop_exits.rest_guard(self)
                        with ir.InsertionPoint(guard.then_block), self.region("if", stmt):
                            self.visit_body(stmts[n + 1:])
                            scf.YieldOp([])
                        return
                except (CompilationError, ir.MLIRError):
                    raise
                except Exception as e:  # a case the frontend does not check: still say where
                    raise self.error(stmt, f"tlc cannot compile this statement "
                                           f"({type(e).__name__}: {e})") from None

    def visit_stmt(self, node) -> None:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"tlc does not support `{type(node).__name__}` statements "
                                   "in a prim_func")
        if isinstance(node, ast.For):  # `for i in T.Parallel(*shape)`
            node = copy.copy(node)
            node.iter = self.expand_starred(node.iter)
        elif isinstance(node, ast.With):  # `with T.Kernel(*grid, threads=...)`
            node = copy.copy(node)
            node.items = [ast.withitem(self.expand_starred(i.context_expr), i.optional_vars)
                          for i in node.items]
        method(node)

    def stmt_Pass(self, node) -> None:
        pass

    def stmt_Assert(self, node) -> None:
        """`assert cond[, msg]` on compile-time values (a kernel parameter, a
        shape): checked while the kernel is built, failing at its line."""
        cond = self.eval(node.test)
        if isinstance(cond, (Scalar, Affine, BufferRef, VarRef)):
            raise self.error(node.test, f"an `assert` in a prim_func checks a compile-time "
                                        f"condition; this one is {self.describe(cond)}, known "
                                        "only at run time: check it on the GPU with "
                                        "T.device_assert(cond, msg)")
        if not cond:
            msg = self.eval_static(node.msg) if node.msg is not None else None
            raise self.error(node, "assertion failed: " + (str(msg) if msg is not None
                                                            else ast.unparse(node.test)))

    def stmt_Expr(self, node) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        if not isinstance(node.value, ast.Call):
            raise self.error(node, "an expression statement must be a call such as T.copy(...)")
        self.eval(node.value)

    def stmt_Return(self, node) -> None:
        if self.macros:
            raise self.error(node, f"`return` may only end the T.macro "
                                   f"'{self.macros[-1].name}' (its last statement, or the last "
                                   f"of a branch of an `if` on a compile-time value)")
        if node.value is not None:
            raise self.error(node, "a prim_func returns nothing: write outputs into tensor "
                                   "parameters")
        raise self.error(node, "`return` may only end a prim_func (the statements after it "
                               "would still be compiled)")

    def expand_macro(self, m, node, args=None, kwargs=None):
        """Builds the body of the T.macro `m` in place of the call `node`: its
        parameters bound to the call's arguments (`args` / `kwargs` when the
        caller evaluated them already), its other names its own (closure,
        globals), errors at its lines. A final `return value` gives the
        call's value."""
        if m in self.macros:
            raise self.error(node, f"the T.macro '{m.name}' calls itself: a macro's body is "
                                   "built in place of each call, so it cannot recurse")
        if args is None:
            if any(isinstance(a, ast.Starred) for a in node.args) or any(
                    k.arg is None for k in node.keywords):
                raise self.error(node, f"call the T.macro '{m.name}' with plain arguments "
                                       "(no * or ** unpacking)")
            args = [self.eval(a) for a in node.args]
            kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        try:
            bound = inspect.signature(m.fn).bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(node, f"T.macro '{m.name}': {e}") from None
        bound.apply_defaults()
        self._check_macro_buffers(m, node, bound.arguments)
        saved = (self.scopes, self.regions, self.filename, self.env, self.statement)
        self.scopes, self.regions = [dict(bound.arguments)], []
        self.filename, self.env = m.filename, m.env
        self.macros.append(m)
        try:
            return self.macro_body(m.node.body)[1]
        finally:
            self.macros.pop()
            self.scopes, self.regions, self.filename, self.env, self.statement = saved

    def _check_macro_buffers(self, m, node, arguments: dict) -> None:
        """Parameters annotated T.SharedBuffer / T.FragmentBuffer / T.LocalBuffer
        take a buffer of that place, dtype and shape."""
        for name, spec in getattr(m.fn, "__annotations__", {}).items():
            if not isinstance(spec, OnChipBuffer) or name not in arguments:
                continue
            buf = arguments[name]
            want = f"T.{spec.kind}({list(spec.shape)}, {spec.dtype})"
            if not isinstance(buf, BufferRef):
                raise self.error(node, f"T.macro '{m.name}': parameter '{name}' is {want}, "
                                       f"got {self.describe(buf)}")
            shape_ok = len(buf.shape) == len(spec.shape) and all(
                not isinstance(a, int) or not isinstance(b, int) or a == b
                for a, b in zip(buf.shape, spec.shape))
            if buf.place != spec.place or buf.dtype != spec.dtype or not shape_ok:
                got = f"the {buf.place} buffer '{buf.name}' ({list(buf.shape)}, {buf.dtype})"
                raise self.error(node, f"T.macro '{m.name}': parameter '{name}' is {want}, "
                                       f"got {got}")

    def macro_body(self, stmts) -> tuple[bool, object]:
        """A macro's statements up to its `return`: (whether one was reached,
        its value). An `if` on a compile-time value that holds a `return` is
        specialized here, so `if mode == "a": return x` ends the macro when
        mode is "a" and the statements after it are never built."""
        run = []
        for n, stmt in enumerate(stmts):
            holds_return = isinstance(stmt, ast.If) and any(
                isinstance(s, ast.Return) for s in ast.walk(stmt))
            if not isinstance(stmt, ast.Return) and not holds_return:
                run.append(stmt)
                continue
            self.visit_body(run)
            run = []
            self.statement = stmt
            if isinstance(stmt, ast.Return):
                if n + 1 < len(stmts):
                    raise self.error(stmts[n + 1], "this statement follows the macro's "
                                                   "`return`: it would never run")
                with self.loc(stmt):
                    return True, None if stmt.value is None else self.eval(stmt.value)
            with self.loc(stmt):
                cond = self.eval(stmt.test)
            if isinstance(cond, (Scalar, Affine, BufferRef)):
                raise self.error(stmt.test, f"a `return` in the T.macro "
                                            f"'{self.macros[-1].name}' may only sit in an `if` "
                                            f"on a compile-time value, got "
                                            f"{self.describe(cond)}")
            done, value = self.macro_body(stmt.body if cond else stmt.orelse)
            if done:
                return True, value
        self.visit_body(run)
        return False, None

    def stmt_Assign(self, node) -> None:
        if reducers.update(self, node):  # R[i] = T.max(R[i], v) of a T.alloc_reducer
            return
        value = self.eval(node.value)
        for target in node.targets:
            self.assign(target, value, node)

    def stmt_AnnAssign(self, node) -> None:
        if node.value is None:
            raise self.error(node, "a declaration needs a value")
        self.assign(node.target, self.eval(node.value), node)

    def assign(self, target, value, node) -> None:
        if isinstance(target, ast.Name):
            var = variables.named(self, target)
            if var is not None and not isinstance(value, VarRef):
                variables.assign(self, var, value, node)  # `x = v` stores into T.alloc_var x
                return
            named = value.buffer if isinstance(value, VarRef) else value
            if isinstance(named, BufferRef) and named.name == "":
                named.name = target.id
            self.bind(target.id, value, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise self.error(node, f"cannot unpack {value!r} into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v, node)
        elif isinstance(target, ast.Subscript):
            self.store(target, value)
        else:
            raise self.error(target, "can only assign to names and buffer elements")

    def stmt_AugAssign(self, node) -> None:
        if reducers.update(self, node):  # R[i] += v of a T.alloc_reducer
            return
        if isinstance(node.target, ast.Name):
            current = self.eval(node.target)
            value = self.binop(node.op, current, self.eval(node.value), node)
            var = variables.named(self, node.target)
            if var is not None:  # `x += v` on a T.alloc_var: a store
                variables.assign(self, var, value, node)
            else:
                self.bind(node.target.id, value, node.target)
        elif isinstance(node.target, ast.Subscript):
            current = self.eval(node.target)
            self.store(node.target, self.binop(node.op, current, self.eval(node.value), node))
        else:
            raise self.error(node.target, "can only update names and buffer elements")

    def stmt_If(self, node) -> None:
        if self.in_kernel and not self.parallel_depth and \
                (branches := thread_ranges.warp_branches(self, node)) is not None:
            # `if tx < 128: ... else: ...` over whole warps: their tile.ws bodies
            for warps, stmts in branches:
                warp_groups.build_ws(self, node, warps, stmts, unit="warps")
            return
        cond = self.eval(node.test)
        if not isinstance(cond, (Scalar, Affine, BufferRef)):  # compile time: specialize
            self.visit_body(node.body if cond else node.orelse)
            return
        if isinstance(cond, BufferRef):
            raise self.error(node.test, f"an `if` needs a compile-time or boolean condition, "
                                        f"got {self.describe(cond)}")
        self.require_kernel(node, "an `if` on a run-time value")
        cond = self.to_value(cond, "bool", node.test)
        op = scf.IfOp(cond, has_else=bool(node.orelse))
        for block, stmts in ((op.then_block, node.body),
                             (op.else_block if node.orelse else None, node.orelse)):
            if block is None:
                continue
            with ir.InsertionPoint(block), self.region("if", node):
                self.visit_body(stmts)
                scf.YieldOp([])

    def stmt_While(self, node) -> None:
        """`while cond:` with a run-time condition: an scf.while whose condition
        is evaluated before every iteration (it may read T.alloc_var scalars
        and buffers the body updates)."""
        if node.orelse:
            raise self.error(node.orelse[0], "`while ... else` is not supported in a prim_func")
        self.require_kernel(node, "a `while` loop")
        exits = loop_exits.loop_exits(self, node)
        loop = scf.WhileOp([], [])
        before, after = loop.before.blocks.append(), loop.after.blocks.append()
        with ir.InsertionPoint(before), self.region("loop", node):
            cond = self.eval(node.test)
            if not isinstance(cond, (Scalar, Affine)):
                raise self.error(node.test, (
                    "a `while` needs a run-time condition (a T.alloc_var, a buffer element, "
                    f"...), got {self.describe(cond)}: a compile-time one would never change "
                    "(use a Python loop outside the prim_func, or T.serial)"))
            with self.loc(node.test):
                go = self.to_value(cond, "bool", node.test)
                clear = loop_exits.not_broken(exits)
                scf.ConditionOp(go if clear is None else arith.andi(clear, go), [])
        with ir.InsertionPoint(after), self.region("loop", node), \
                loop_exits.loop_body(self, exits):
            loop_exits.start_iteration(exits)
            self.visit_body(node.body)
            scf.YieldOp([])

    def stmt_Break(self, node) -> None:
        loop_exits.stmt_exit(self, node, "break")

    def stmt_Continue(self, node) -> None:
        loop_exits.stmt_exit(self, node, "continue")

    def stmt_With(self, node) -> None:
        if len(node.items) != 1:
            raise self.error(node, "use one `with T.Kernel(...) as ...:`")
        item = node.items[0]
        call = item.context_expr
        fn = self.eval_static(call.func) if isinstance(call, ast.Call) else None
        if fn is self.T("ws"):
            if item.optional_vars is not None:
                raise self.error(item.optional_vars, "`with T.ws(...)` binds no name")
            from .warp_groups import warp_groups

            return warp_groups(self, call, node.body)
        if fn is not self.T("Kernel"):
            raise self.error(item.context_expr, "the only `with` blocks in a prim_func are "
                                                "`with T.Kernel(...) as ...:` and "
                                                "`with T.ws(...):`")
        from .intrinsics import kernel

        kernel(self, call, item.optional_vars, node.body)

    def stmt_For(self, node) -> None:
        from .intrinsics import for_loop

        for_loop(self, node)

    # -- helpers shared with intrinsics --------------------------------------

    def T(self, name: str):
        """The intrinsic `T.<name>` (a function of tlc.language)."""
        from .. import language

        return getattr(language, name)

    def require_kernel(self, node, what: str) -> None:
        if not self.in_kernel:
            raise self.error(node, f"{what} must be inside `with T.Kernel(...)`")

    def store(self, target: ast.Subscript, value) -> None:
        from .column_split import ColumnPieces, route

        if variables.named(self, target.value) is None and \
                isinstance(pieces := self.eval(target.value), ColumnPieces):
            # an element of a buffer split by its column slices: in its column's piece
            route(self, target, pieces,
                  lambda piece, at: self.store_element(piece, at, value, target))
            return
        buf, indices = self.subscript(target)
        if buf.place == "barrier":
            raise self.error(target, f"'{buf.name}' holds mbarriers: use them with "
                                     "T.barrier_wait and T.barrier_arrive")
        self.store_element(buf, indices, value, target)

    def store_element(self, buf: BufferRef, indices, value, node) -> None:
        """Stores `value`, converted to `buf`'s dtype, at `indices` (errors at `node`)."""
        from ..dialects import memref

        v = self.to_value(value, buf.dtype, node)
        if buf.dtype == "bool":  # stored as a byte
            v = arith.extui(dtypes.storage_type("bool"), v)
        memref.store(v, buf.value, [index_value(i) for i in indices])
        if buf.place == "local":
            self.var_reads = {}  # T.alloc_var reads are read again (variables.read)


def _drop_unused_shared(module: ir.Module) -> None:
    """Erases the program's T.alloc_shared buffers that nothing reads or writes
    (one allocated on a path a compile-time branch did not take): they would
    take shared memory for the whole kernel."""
    unused = []

    def visit(op):
        if op.name == "tile.alloc_shared" and not list(op.results[0].uses):
            unused.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in unused:
        op.erase()


def _stage_element_accesses(module: ir.Module) -> None:
    """Element loads and stores of a shared allocation laid out in stages (a
    buffer some op named by its stages, `A_s[k % 2, :, :]`) reach it through
    the tile.stage of their leading index, as every use of such an
    allocation does (TileLang's per-thread producers store into
    `KV_s[stage, row, col]`)."""
    from ..dialects import memref

    staged = []

    def visit(op):
        if op.name == "tile.alloc_shared" and "layout" in op.attributes and \
                "stages" in str(op.attributes["layout"]):
            staged.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for alloc in staged:
        value = alloc.results[0]
        t = ir.MemRefType(value.type)
        stage_t = ir.MemRefType.get(t.shape[1:], t.element_type, memory_space=t.memory_space)
        for use in list(value.uses):
            user = use.owner
            if user.name not in ("memref.load", "memref.store"):
                continue
            first = 1 if user.name == "memref.store" else 0  # the memref's operand
            indices = list(user.operands)[first + 1:]
            with ir.InsertionPoint(user), user.location:
                stage = tile.stage(stage_t, value, indices[0])
                if user.name == "memref.load":
                    new = memref.load(stage, indices[1:])
                    user.results[0].replace_all_uses_with(new)
                else:
                    memref.store(user.operands[0], stage, indices[1:])
            user.erase()


def build_module(prim, context=None, module: ir.Module | None = None) -> ir.Module:
    """Builds the tile IR of `prim` into `module` (else a new module, in
    `context` or a new context)."""
    from .. import timing
    from ..compiler.diagnostics import compilation_error
    from ..compiler.pipeline import new_context

    with timing.stage(f"frontend: {prim.name}, Python AST -> tile IR"):
        context = module.context if module is not None else (context or new_context())
        with context, ir.Location.unknown():
            if module is None:
                module = ir.Module.create()
                module.operation.attributes["tile.source"] = ir.StringAttr.get(prim.filename)
            try:
                CodeGenerator(prim, module).build()
                _drop_unused_shared(module)
                _stage_element_accesses(module)
                # Verify here, so that an invalid program (a T.gemm whose shapes do
                # not agree) is reported at its line whatever is done with the IR.
                module.operation.verify()
            except ir.MLIRError as e:
                raise compilation_error(e, "invalid tile program", prim.filename) from None
    return module
