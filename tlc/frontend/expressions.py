"""The expression half of the frontend: Python expressions -> values or IR."""

from __future__ import annotations

import ast
import copy
import operator

from .. import ir
from ..dialects import arith, memref
from ..errors import CompilationError
from ..language.intrinsic import intrinsic_name
from .prim_func import Macro
from ..language.types import SymbolicDim, SymbolicExpr, Tensor, dtype as DType
from . import dtypes, variables
from .column_split import ColumnPieces, piece_of, whole_slices
from .values import Affine, BufferRef, Scalar, VarRef, as_affine, index_value, simplify

_PY_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_PY_CMPS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_CMPI = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt",
         ast.GtE: "sge"}
_CMPF = {ast.Eq: "oeq", ast.NotEq: "une", ast.Lt: "olt", ast.LtE: "ole", ast.Gt: "ogt",
         ast.GtE: "oge"}
_BIT_OPS = (ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)


def _cmpi(pred: str, a, b):
    """arith.cmpi by predicate name ("slt", "ne", ...); the builder takes the enum."""
    return arith.cmpi(arith.CmpIPredicate[pred], a, b)


def _cmpf(pred: str, a, b):
    return arith.cmpf(arith.CmpFPredicate[pred.upper()], a, b)


def _is_number(x) -> bool:
    return isinstance(x, (int, float))  # bools included


def _is_index(x) -> bool:
    return (isinstance(x, Affine) or (isinstance(x, int) and not isinstance(x, bool))
            or (isinstance(x, Scalar) and x.dtype == "index"))


def _is_run_time_index(x) -> bool:
    return isinstance(x, Affine) or (isinstance(x, Scalar) and x.dtype == "index")


def _is_int_scalar(x) -> bool:
    return isinstance(x, Scalar) and x.dtype not in ("index", "bool") and dtypes.is_int(x.dtype)


def _constant_dtype(a, b) -> str:
    """The dtype of a run-time choice between two compile-time numbers: bool for
    two bools, float32 when either is a float, else int32."""
    if isinstance(a, bool) and isinstance(b, bool):
        return "bool"
    if isinstance(a, float) or isinstance(b, float):
        return "float32"
    return "int32"


class ExpressionMixin:
    """Evaluation of expressions; mixed into CodeGenerator."""

    # -- entry points ---------------------------------------------------------

    def eval(self, node):
        node = self.expand_starred(node)
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"tlc does not support `{type(node).__name__}` expressions "
                                   "in a prim_func")
        with self.loc(node):
            try:
                return simplify(method(node))
            except (CompilationError, ir.MLIRError):
                raise
            except RecursionError:
                raise self.error(node, "this expression nests operators too deeply for tlc's "
                                       "frontend; split it with intermediate variables") from None
            except Exception as e:  # a case the frontend does not check: still say where
                raise self.error(node, f"tlc cannot compile this expression "
                                       f"({type(e).__name__}: {e})") from None

    def expand_starred(self, node):
        """The call `node` with each `*xs` argument spelled out, one argument per
        element of the compile-time sequence `xs` (a literal for a number or a
        string, else `xs[i]`), so that intrinsics read `T.Kernel(*grid, ...)` as
        written arguments. Any other node is returned as it is; the AST itself is
        not changed (the same program compiles again with other values)."""
        if not isinstance(node, ast.Call) or not any(isinstance(a, ast.Starred)
                                                     for a in node.args):
            return node
        args = []
        for a in node.args:
            if not isinstance(a, ast.Starred):
                args.append(a)
                continue
            seq = self.eval_static(a.value)
            if not isinstance(seq, (tuple, list)):
                raise self.error(a, f"`*` here unpacks a tuple or list, got "
                                    f"{self.describe(seq)}")
            for i, v in enumerate(seq):
                if v is None or isinstance(v, (bool, int, float, str)):
                    arg = ast.Constant(v)
                else:
                    arg = ast.Subscript(value=a.value, slice=ast.Constant(i), ctx=ast.Load())
                    ast.copy_location(arg.slice, a)
                args.append(ast.copy_location(arg, a))
        call = copy.copy(node)
        call.args = args
        return call

    def eval_static(self, node):
        """An expression that must be a compile-time value."""
        value = self.eval(node)
        if isinstance(value, (Affine, Scalar, BufferRef)):
            raise self.error(node, f"expected a compile-time value here, got "
                                   f"{self.describe(value)}")
        return value

    def eval_int(self, node, what: str) -> int:
        value = self.eval(node)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{what} must be a compile-time integer, got "
                                   f"{self.describe(value)}")
        return value

    def check_index(self, value, node, what: str):
        """`value` if it can be an index (a Python int, run-time index or integer
        scalar), else an error naming `what`."""
        if _is_index(value) or (isinstance(value, Scalar) and dtypes.is_int(value.dtype)
                                and value.dtype != "bool"):
            return value
        raise self.error(node, f"{what} must be an integer, got {self.describe(value)}")

    def index(self, value, node, what: str) -> ir.Value:
        """`value` as an index value, built here (see check_index)."""
        return index_value(self.check_index(value, node, what))

    def describe(self, value) -> str:
        if isinstance(value, (tuple, list)) and any(
                isinstance(v, (Affine, Scalar, BufferRef)) for v in value):
            inner = ", ".join(self.describe(v) for v in value)
            return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) \
                else f"[{inner}]"
        if isinstance(value, BufferRef):
            return f"buffer '{value.name}'"
        if isinstance(value, VarRef):
            return "a T.alloc_var declaration (not a value: assign it to a name and use the name)"
        if isinstance(value, Affine):
            return "a run-time index"
        if isinstance(value, Scalar):
            return f"a run-time {value.dtype} value"
        return repr(value)

    # -- leaves ---------------------------------------------------------------

    def expr_Constant(self, node):
        return node.value

    def expr_Name(self, node):
        value = self.lookup(node.id, node)
        if isinstance(value, VarRef):  # a T.alloc_var: its current value
            return variables.read(self, value)
        if isinstance(value, SymbolicDim):
            return self.symbol(value, node)
        return value

    def _comprehension(self, node):
        """A list / set / dict comprehension or generator expression over
        compile-time values (`sum(cdiv(n, block) for n in sizes)`), run as
        Python; a run-time value in it is an error."""
        bound = {t.id for comp in node.generators for t in ast.walk(comp.target)
                 if isinstance(t, ast.Name)}
        env = {}
        for name in {n.id for n in ast.walk(node)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound:
            value = self.lookup(name, node)
            if isinstance(value, VarRef):
                value = variables.read(self, value)
            if isinstance(value, (Affine, Scalar, BufferRef)):
                raise self.error(node, f"a comprehension runs at compile time: '{name}' is "
                                       f"{self.describe(value)}; use a T.serial loop for "
                                       "run-time values")
            env[name] = value
        try:
            return eval(compile(ast.fix_missing_locations(ast.Expression(node)),
                                self.filename, "eval"), env)
        except CompilationError:
            raise
        except Exception as e:
            raise self.error(node, f"{type(e).__name__}: {e}") from None

    expr_ListComp = expr_SetComp = expr_DictComp = expr_GeneratorExp = _comprehension

    def implicit_macro(self, fn):
        """A plain Python function of the program's (not tlc's, not a library's)
        called with run-time values, as TileLang's helpers are (T.cast and
        T.if_then_else on their arguments), or a lambda of the program's
        (`op = lambda a, b: T.max(a, b)`): built in place of the call like a
        @T.macro. None for anything else (builtins, library code, a lambda
        tlc cannot tell apart from another alike on its line)."""
        import types

        from .prim_func import _find_lambda

        if not isinstance(fn, types.FunctionType):
            return None
        module = getattr(fn, "__module__", "") or ""
        if module.split(".")[0] in ("tlc", "numpy", "torch", "math", "builtins"):
            return None
        cache = self.__dict__.setdefault("_implicit_macros", {})
        if fn not in cache:
            try:
                if fn.__name__ == "<lambda>":
                    node = _find_lambda(fn, fn.__code__.co_filename)
                    cache[fn] = Macro(fn, node) if node is not None else None
                else:
                    cache[fn] = Macro(fn)
            except Exception:  # no source to read (defined in a REPL)
                cache[fn] = None
        return cache[fn]

    def symbol(self, sym: SymbolicDim, node) -> Affine:
        if isinstance(sym, SymbolicExpr):  # `seq_len * heads`: computed from its symbols
            ops = {"+": ast.Add(), "-": ast.Sub(), "*": ast.Mult(), "//": ast.FloorDiv()}
            side = lambda x: self.symbol(x, node) if isinstance(x, SymbolicDim) else x  # noqa
            return self.binop(ops[sym.op], side(sym.lhs), side(sym.rhs), node)
        if sym.name not in self.symbols:
            raise self.error(node, f"symbolic size '{sym.name}' is not the size of any tensor "
                                   "parameter")
        return self.symbols[sym.name]

    def expr_Attribute(self, node):
        var = variables.named(self, node.value)
        if var is not None:
            return variables.attribute(self, var, node)
        base = self.eval(node.value)
        if isinstance(base, BufferRef):
            if node.attr == "shape":
                return tuple(base.shape)
            if node.attr == "dtype":
                return DType(base.dtype)
            if node.attr == "data":
                from .tensor_views import data_of

                return data_of(self, base, node)
            raise self.error(node, f"buffers have .shape, .dtype and .data, not .{node.attr}")
        if isinstance(base, (Affine, Scalar)):
            if node.attr == "dtype":  # TVM's PrimExpr.dtype (an index is TileLang's int32)
                return DType("int32" if isinstance(base, Affine) or base.dtype == "index"
                             else base.dtype)
            raise self.error(node, f"{self.describe(base)} has no attribute '{node.attr}'")
        try:
            return getattr(base, node.attr)
        except AttributeError:
            if getattr(base, "__name__", "") == "tlc.language":
                raise self.error(node, f"T.{node.attr} is not part of the tile language "
                                       "(tlc.language)") from None
            raise self.error(node, f"{base!r} has no attribute '{node.attr}'") from None

    def expr_Tuple(self, node):
        return tuple(self.eval(e) for e in node.elts)

    def expr_List(self, node):
        return [self.eval(e) for e in node.elts]

    def expr_ListComp(self, node):
        """`[expr for x in <compile-time iterable>]` (one `for`, with `if`s):
        the element built once per item, in order (`[T.alloc_shared(...) for _
        in range(stages)]`); its names do not leak out, as in Python."""
        if len(node.generators) != 1 or node.generators[0].is_async:
            raise self.error(node, "a list comprehension in a prim_func takes one `for`")
        comp = node.generators[0]
        items = self.eval_static(comp.iter)
        try:
            items = list(items)
        except TypeError:
            raise self.error(comp.iter, f"a comprehension iterates over a compile-time "
                                        f"iterable, got {self.describe(items)}") from None
        out = []
        with self.scope():
            for item in items:
                self.bind_target(comp.target, item)
                if all(self.eval_static(cond) for cond in comp.ifs):
                    out.append(self.eval(node.elt))
        return out

    def bind_target(self, target, value) -> None:
        """Binds a comprehension's target (a name, or a tuple of names) to a
        compile-time value."""
        if isinstance(target, ast.Name):
            self.scopes[-1][target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            values = list(value)
            if len(values) != len(target.elts):
                raise self.error(target, f"cannot unpack {len(values)} values into "
                                         f"{len(target.elts)} names")
            for t, v in zip(target.elts, values):
                self.bind_target(t, v)
            return
        raise self.error(target, "a comprehension binds names (or tuples of names)")

    def expr_Dict(self, node):
        return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}

    def expr_Slice(self, node):
        return slice(*(None if n is None else self.eval(n)
                       for n in (node.lower, node.upper, node.step)))

    def expr_Lambda(self, node):
        """A lambda is compile-time Python (a T.Fragment's layout functions):
        compiled as Python over the names it reads, which must be compile-time
        values here (a lambda cannot capture a run-time index)."""
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise self.error(node, "a lambda in a prim_func takes plain positional parameters")
        params = {a.arg for a in args.args}
        env = {}
        for name in ast.walk(node.body):
            if not isinstance(name, ast.Name) or name.id in params or name.id in env:
                continue
            try:
                value = self.lookup(name.id, name)
            except CompilationError:
                continue  # a builtin, a nested lambda's parameter, or a NameError when called
            if isinstance(value, (Affine, Scalar, VarRef)):
                raise self.error(name, f"a lambda in a prim_func runs at compile time; it "
                                       f"cannot read '{name.id}', {self.describe(value)}")
            env[name.id] = value
        code = compile(ast.Expression(node), self.filename, "eval")
        return eval(code, {"__builtins__": __builtins__, **env})

    def expr_JoinedStr(self, node):
        """An f-string of compile-time values (an assert's or T.print's message)."""
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
                continue
            value = self.eval(part.value)
            if isinstance(value, (Scalar, Affine, BufferRef, VarRef)):
                raise self.error(part.value, f"an f-string in a prim_func formats compile-time "
                                             f"values; {self.describe(value)} is known only at "
                                             "run time (T.print prints run-time values)")
            if part.conversion != -1:
                value = {ord("r"): repr, ord("s"): str, ord("a"): ascii}[part.conversion](value)
            spec = self.eval(part.format_spec) if part.format_spec is not None else ""
            parts.append(format(value, spec))
        return "".join(parts)

    # -- operators -------------------------------------------------------------

    def expr_BinOp(self, node):
        return self.binop(node.op, self.eval(node.left), self.eval(node.right), node)

    def binop(self, op, a, b, node):
        if _is_number(a) and _is_number(b):
            return _PY_BINOPS[type(op)](a, b)
        # Compile-time sequences: Python's `+` and `*` (`[128] * stages`).
        if isinstance(op, (ast.Add, ast.Mult)) and any(
                isinstance(x, (tuple, list)) for x in (a, b)) and all(
                isinstance(x, (tuple, list)) or _is_number(x) for x in (a, b)):
            try:
                return _PY_BINOPS[type(op)](a, b)
            except TypeError:
                pass  # reported below
        if isinstance(a, (BufferRef, VarRef, tuple, list)) or isinstance(
                b, (BufferRef, VarRef, tuple, list)):
            raise self.error(node, f"cannot compute {self.describe(a)} "
                                   f"{type(op).__name__} {self.describe(b)}")
        if _is_index(a) and _is_index(b):
            return self.index_binop(op, a, b, node)
        if isinstance(op, (ast.Add, ast.Sub, ast.Mult)) and (
                (_is_run_time_index(a) and _is_int_scalar(b))
                or (_is_int_scalar(a) and _is_run_time_index(b))):
            # An integer read at run time (a sequence offset) plus an index: an
            # index, whose leaf for that integer is shared by every expression
            # over it, so `A[s + i:s + i + 64]` has a compile-time extent.
            a, b = (self.index_leaf(x) if _is_int_scalar(x) else x for x in (a, b))
            return self.index_binop(op, a, b, node)
        dt = self.result_dtype(a, b, node)
        if dt == "index" and isinstance(op, _BIT_OPS):
            # Shifts and bit operations of a sized integer with an index run
            # as TileLang runs them with its int32 loop variables: in the
            # integer's type when it has 32 bits or more (`q << (28 - 4 *
            # (i % 2))` of an int32 q wraps at 32 bits, then `>> 28`
            # sign-extends), else in int32 (a uint8 byte shifted by an index).
            sized = [d for d in (self.dtype_of(a), self.dtype_of(b))
                     if d not in (None, "index", "bool") and dtypes.is_int(d)]
            if sized:
                widest = max(sized, key=dtypes.bits)
                dt = widest if dtypes.bits(widest) >= 32 else "int32"
        va, vb = self.to_value(a, dt, node), self.to_value(b, dt, node)
        if dtypes.is_float(dt):
            ops = {ast.Add: arith.addf, ast.Sub: arith.subf, ast.Mult: arith.mulf,
                   ast.Div: arith.divf, ast.Mod: arith.remf}
        else:
            ops = {ast.Add: arith.addi, ast.Sub: arith.subi, ast.Mult: arith.muli,
                   ast.Div: arith.divsi, ast.FloorDiv: arith.floordivsi, ast.Mod: arith.remsi,
                   ast.BitAnd: arith.andi, ast.BitOr: arith.ori, ast.BitXor: arith.xori,
                   ast.LShift: arith.shli, ast.RShift: arith.shrsi}
            if dtypes.is_unsigned(dt):  # the bits as an unsigned number: no sign to keep
                ops.update({ast.Div: arith.divui, ast.FloorDiv: arith.divui,
                            ast.Mod: arith.remui, ast.RShift: arith.shrui})
        if type(op) not in ops:
            raise self.error(node, f"operator {type(op).__name__} is not supported on {dt}")
        return Scalar(ops[type(op)](va, vb), dt)

    def index_leaf(self, x: Scalar) -> Affine:
        """The integer scalar `x` as an index leaf: cast once per value, right after
        the value is defined (so the cast dominates every use of `x`)."""
        cast = self.index_casts.get(x.value)
        if cast is None:
            if isinstance(x.value, ir.OpResult):
                where = ir.InsertionPoint.after(x.value.owner)
            else:
                where = ir.InsertionPoint.at_block_begin(x.value.owner)
            with where:
                cast = self.convert(x, "index")
            self.index_casts[x.value] = cast
        return Affine.leaf(cast)

    def index_binop(self, op, a, b, node):
        if isinstance(a, Scalar):
            a = Affine.leaf(a.value)
        if isinstance(b, Scalar):
            b = Affine.leaf(b.value)
        if isinstance(op, ast.Add):
            return as_affine(a) + b
        if isinstance(op, ast.Sub):
            return as_affine(a) - b
        if isinstance(op, ast.Mult) and (isinstance(a, int) or isinstance(b, int)):
            return as_affine(b).scale(a) if isinstance(a, int) else as_affine(a).scale(b)
        ops = {ast.Mult: arith.muli, ast.FloorDiv: arith.floordivsi, ast.Div: arith.floordivsi,
               ast.Mod: arith.remsi, ast.LShift: arith.shli, ast.RShift: arith.shrsi,
               ast.BitAnd: arith.andi, ast.BitOr: arith.ori, ast.BitXor: arith.xori}
        if type(op) not in ops:
            raise self.error(node, f"operator {type(op).__name__} is not supported on indices")
        return Affine.leaf(ops[type(op)](index_value(a), index_value(b)))

    def expr_UnaryOp(self, node):
        v = self.eval(node.operand)
        if isinstance(node.op, ast.Not):
            if isinstance(v, Scalar):
                return Scalar(arith.xori(self.to_value(v, "bool", node),
                                         arith.constant(ir.IntegerType.get_signless(1), 1)),
                              "bool")
            return not v
        if _is_number(v):
            return {ast.USub: operator.neg, ast.UAdd: operator.pos,
                    ast.Invert: operator.invert}[type(node.op)](v)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub):
            if isinstance(v, Affine):
                return -v
            if isinstance(v, Scalar) and dtypes.is_float(v.dtype):
                return Scalar(arith.negf(v.value), v.dtype)
            return self.binop(ast.Sub(), 0, v, node)
        if isinstance(node.op, ast.Invert) and isinstance(v, Scalar) and \
                not dtypes.is_float(v.dtype) and v.dtype not in ("bool", "index"):
            # ~x of an integer: its bits flipped (x ^ all ones), in its own dtype
            ones = arith.constant(v.value.type, -1)
            return Scalar(arith.xori(v.value, ones), v.dtype)
        raise self.error(node, f"operator {type(node.op).__name__} is not supported here")

    def expr_Compare(self, node):
        left = self.eval(node.left)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node)
            part = self.compare(op, left, right, node)
            result = part if result is None else self.logical(ast.And(), result, part, node)
            left = right
        return result

    def compare(self, op, a, b, node):
        if not isinstance(a, (Affine, Scalar)) and not isinstance(b, (Affine, Scalar)):
            return _PY_CMPS[type(op)](a, b)
        if type(op) not in _CMPI:
            raise self.error(node, f"comparison {type(op).__name__} needs compile-time values")
        if isinstance(a, BufferRef) or isinstance(b, BufferRef):
            raise self.error(node, f"cannot compare {self.describe(a)} with {self.describe(b)}")
        if _is_index(a) and _is_index(b):
            return Scalar(_cmpi(_CMPI[type(op)], index_value(a), index_value(b)), "bool")
        dt = self.result_dtype(a, b, node)
        va, vb = self.to_value(a, dt, node), self.to_value(b, dt, node)
        if dtypes.is_float(dt):
            return Scalar(_cmpf(_CMPF[type(op)], va, vb), "bool")
        pred = _CMPI[type(op)]
        if dtypes.is_unsigned(dt) and pred[0] == "s":
            pred = "u" + pred[1:]
        return Scalar(_cmpi(pred, va, vb), "bool")

    def expr_BoolOp(self, node):
        result = self.eval(node.values[0])
        for v in node.values[1:]:
            if not isinstance(result, Scalar):
                # Python semantics with compile-time short-circuiting.
                if isinstance(node.op, ast.And) and not result:
                    return result
                if isinstance(node.op, ast.Or) and result:
                    return result
                result = self.eval(v)
                continue
            result = self.logical(node.op, result, self.eval(v), node)
        return result

    def logical(self, op, a, b, node):
        if not isinstance(a, Scalar) and not isinstance(b, Scalar):
            return (a and b) if isinstance(op, ast.And) else (a or b)
        va, vb = self.to_value(a, "bool", node), self.to_value(b, "bool", node)
        return Scalar((arith.andi if isinstance(op, ast.And) else arith.ori)(va, vb), "bool")

    def expr_IfExp(self, node):
        cond = self.eval(node.test)
        if not isinstance(cond, Scalar):
            return self.eval(node.body if cond else node.orelse)
        a, b = self.eval(node.body), self.eval(node.orelse)
        return self.select(cond, a, b, node)

    def select(self, cond, a, b, node):
        if _is_index(a) and _is_index(b):
            dt = "index"
        elif self.dtype_of(a) is None and self.dtype_of(b) is None:
            dt = _constant_dtype(a, b)  # T.if_then_else(c, 1.0, 0.0)
        else:
            dt = self.result_dtype(a, b, node)
        va, vb = self.to_value(a, dt, node), self.to_value(b, dt, node)
        result = arith.select(self.to_value(cond, "bool", node), va, vb)
        return Affine.leaf(result) if dt == "index" else Scalar(result, dt)

    # -- types ----------------------------------------------------------------------

    def dtype_of(self, x) -> str | None:
        if isinstance(x, Scalar):
            return x.dtype
        if isinstance(x, Affine):
            return "index"
        return None

    def result_dtype(self, a, b, node) -> str:
        """The dtype two operands meet in (TVM-like: the wider float, else the int)."""
        da, db = self.dtype_of(a), self.dtype_of(b)
        if da is None and db is None:
            raise self.error(node, "internal: no run-time operand")
        if da is None or db is None:
            return da or db
        if da == db:
            return da
        if dtypes.is_float(da) and dtypes.is_float(db):
            return da if dtypes.bits(da) >= dtypes.bits(db) else db
        if dtypes.is_float(da) != dtypes.is_float(db):
            return da if dtypes.is_float(da) else db
        if "index" in (da, db):
            return "index"
        return da if dtypes.bits(da) >= dtypes.bits(db) else db

    def to_value(self, x, dt: str, node) -> ir.Value:
        """`x` as an MLIR value of dtype `dt`, converting or materializing."""
        if isinstance(x, BufferRef):
            raise self.error(node, f"{self.describe(x)} is not a value; index it (x[i, j])")
        if isinstance(x, VarRef):
            raise self.error(node, "a T.alloc_var declaration is not a value: assign it to a "
                                   "name (x = T.alloc_var(...)) and use the name")
        if isinstance(x, (Affine, Scalar)) and dt == "index":
            return index_value(x)
        if isinstance(x, Affine):
            x = Scalar(x.materialize(), "index")
        if isinstance(x, Scalar):
            return self.convert(x, dt)
        if isinstance(x, bool):
            x = int(x)
        if not isinstance(x, (int, float)):
            raise self.error(node, f"expected a number, got {x!r}")
        t = dtypes.mlir_type(dt)
        if dtypes.is_float(dt):
            return arith.constant(t, float(x))
        if isinstance(x, float):
            raise self.error(node, f"cannot use the float {x} as a {dt} value")
        if dt == "bool":
            return arith.constant(t, int(x != 0))
        self.check_int_constant(x, dt, node)
        return arith.constant(t, x)

    def check_int_constant(self, x: int, dt: str, node) -> None:
        """An error at `node` when the integer constant `x` does not fit `dt`."""
        lo, hi = dtypes.int_range(dt)
        if not lo <= x <= hi:
            raise self.error(node, f"the integer constant {x} does not fit in {dt} "
                                   f"(range {lo} to {hi})")

    def convert(self, x: Scalar, dt: str) -> ir.Value:
        src, v = x.dtype, x.value
        if src == dt:
            return v
        to = dtypes.mlir_type(dt)
        if dt == "bool":
            zero = self.to_value(0, src, None)
            return (_cmpf("une", v, zero) if dtypes.is_float(src)
                    else _cmpi("ne", v, zero))
        if src == "index" and dtypes.is_float(dt):  # int<->float casts take no index
            return self.convert(Scalar(self.convert(x, "int64"), "int64"), dt)
        if dt == "index" and dtypes.is_float(src):
            return self.convert(Scalar(self.convert(x, "int64"), "int64"), dt)
        if dtypes.is_float(src) and dtypes.is_float(dt):
            return (arith.extf(to, v) if dtypes.bits(src) < dtypes.bits(dt)
                    else arith.truncf(to, v))
        if dtypes.is_float(src):
            return arith.fptoui(to, v) if dtypes.is_unsigned(dt) else arith.fptosi(to, v)
        if dtypes.is_float(dt):
            return arith.uitofp(to, v) if dtypes.is_unsigned(src) else arith.sitofp(to, v)
        if "index" in (src, dt):
            return (arith.index_castui if dtypes.is_unsigned(src) else arith.index_cast)(to, v)
        if dtypes.bits(src) < dtypes.bits(dt):
            return (arith.extui if dtypes.is_unsigned(src) else arith.extsi)(to, v)
        if dtypes.bits(src) > dtypes.bits(dt):
            return arith.trunci(to, v)
        return v  # int8 <-> uint8: the same bits

    # -- buffers --------------------------------------------------------------

    def subscript(self, node: ast.Subscript):
        """(buffer, index list) of an element access `buf[i, j]` (or `x[0]` of a
        T.alloc_var `x`)."""
        var = variables.named(self, node.value)
        buf = var.buffer if var is not None else self.eval(node.value)
        if not isinstance(buf, BufferRef):
            raise self.error(node.value, f"only buffers can be indexed, got {self.describe(buf)}")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        indices = [self.eval(i) for i in items]
        if var is not None and any(isinstance(i, slice) for i in indices):
            raise self.error(node, f"'{var.name}' is a T.alloc_var scalar: it has no slices "
                                   f"(read it as `{var.name}`, or `{var.name}[0]`)")
        if any(isinstance(i, slice) for i in indices):
            raise self.error(node, "slices select regions for T.copy; an element access "
                                   "needs one index per dimension")
        if len(indices) != buf.rank:
            raise self.error(node, f"'{buf.name}' has {buf.rank} dimension(s) but is indexed "
                                   f"with {len(indices)}")
        for dim, (i, idx) in enumerate(zip(items, indices)):
            if not (_is_index(idx) or (isinstance(idx, Scalar) and dtypes.is_int(idx.dtype))):
                raise self.error(i, f"an index must be an integer, got {self.describe(idx)}")
            self.check_constant_index(buf, dim, idx, i)
        if buf.place == "global":
            from .intrinsics import placed_indices

            indices = placed_indices(self, buf, indices, node)
        return buf, indices

    def check_constant_index(self, buf: BufferRef, dim: int, idx, node) -> None:
        """A constant index must be inside an on-chip buffer's static shape (a
        kernel would read or write past it); any constant must be an index.
        So must an affine index of loop indices with constant bounds, outside
        any run-time `if` (which may guard it)."""
        if isinstance(idx, Affine) and idx.terms:
            self.check_affine_index(buf, dim, idx, node)
            return
        if isinstance(idx, Affine):
            idx = idx.constant()
        if not isinstance(idx, int) or isinstance(idx, bool):
            return
        size = buf.shape[dim]
        if buf.place != "global" and isinstance(size, int) and not 0 <= idx < size:
            shape = ", ".join(str(d) for d in buf.shape)
            raise self.error(node, f"index {idx} is outside dimension {dim} of '{buf.name}' "
                                   f"(shape [{shape}], {buf.place}): valid indices are 0 "
                                   f"to {size - 1}")
        self.check_int_constant(idx, "index", node)

    def check_affine_index(self, buf: BufferRef, dim: int, idx: Affine, node) -> None:
        size = buf.shape[dim]
        if buf.place == "global" or not isinstance(size, int) or any(
                kind == "if" for kind, _, _ in self.regions):
            return
        lo = hi = idx.const
        for value, coeff in idx.terms.items():
            if value not in self.ranges:
                return
            first, last = self.ranges[value]
            lo += min(coeff * first, coeff * last)
            hi += max(coeff * first, coeff * last)
        if lo < 0 or hi >= size:
            shape = ", ".join(str(d) for d in buf.shape)
            raise self.error(node, f"index `{ast.unparse(node)}` takes the values {lo} to {hi}, "
                                   f"outside dimension {dim} of '{buf.name}' (shape [{shape}], "
                                   f"{buf.place}): valid indices are 0 to {size - 1}")

    def expr_Subscript(self, node):
        var = variables.named(self, node.value)
        base = var.buffer if var is not None else self.eval(node.value)
        if isinstance(base, ColumnPieces):  # `Q_s[:, :D]`: the buffer holding that slice
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(i, ast.Slice) for i in items):
                return piece_of(self, node, base)
            from .column_split import route  # an element: in the piece holding its column

            return route(self, node, base, self.load_element,
                         dtypes.storage_type(base.dtype) if base.dtype != "bool" else
                         ir.IntegerType.get_signless(1))
        if isinstance(base, BufferRef) and var is None and whole_slices(self, node, base):
            return base  # `A_s[:M, :K]` of an M x K buffer: the buffer itself
        if not isinstance(base, BufferRef):
            if isinstance(base, (tuple, list, dict, str)):
                return base[self.eval_static(node.slice)]
            raise self.error(node.value, f"cannot index {self.describe(base)}")
        buf, indices = self.subscript(node)
        if buf.place == "barrier":
            raise self.error(node, f"'{buf.name}' holds mbarriers: use them with "
                                   "T.barrier_wait and T.barrier_arrive")
        if buf.reducer is not None:  # after T.finalize_reducer every thread holds it whole
            from .reducers import check_read

            check_read(self, node, buf)
        return self.load_element(buf, indices)

    def load_element(self, buf: BufferRef, indices) -> Scalar:
        """The element of `buf` at `indices`, loaded here."""
        loaded = memref.load(buf.value, [index_value(i) for i in indices])
        if buf.dtype == "bool":  # a byte in memory, 0 or 1
            zero = arith.constant(dtypes.storage_type("bool"), 0)
            loaded = arith.cmpi(arith.CmpIPredicate.ne, loaded, zero)
        return Scalar(loaded, buf.dtype)

    # -- calls ----------------------------------------------------------------------

    def expr_Call(self, node):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "astype":
            # TileLang's `x.astype(dtype)` on a run-time value: T.cast.
            value = self.eval(node.func.value)
            if isinstance(value, (Affine, Scalar)):
                from .intrinsic_args import parse_dtype
                from .math_intrinsics import cast_to

                if len(node.args) != 1 or node.keywords:
                    raise self.error(node, "x.astype(dtype) takes one dtype")
                return cast_to(self, value, parse_dtype(self, node.args[0]), node)
            fn = getattr(value, "astype", None)
            if fn is None:
                raise self.error(node.func, f"{self.describe(value)} has no attribute 'astype'")
        else:
            fn = self.eval(node.func)
        if isinstance(fn, Macro):
            return self.expand_macro(fn, node)
        name = intrinsic_name(fn)
        if name is not None:
            from . import intrinsics, math_intrinsics

            handler = (getattr(intrinsics, "call_" + name, None)
                       or getattr(math_intrinsics, "call_" + name, None))
            if handler is None:
                raise self.error(node, f"T.{name} is not valid in an expression here")
            return handler(self, node)
        if fn is Tensor and (len(node.args) > 2 or any(k.arg == "data" for k in node.keywords)):
            from .tensor_views import call_tensor_view

            return call_tensor_view(self, node)
        if isinstance(fn, DType):
            from .math_intrinsics import cast_to

            if len(node.args) != 1 or node.keywords:
                raise self.error(node, f"T.{fn}(x) takes one value")
            return cast_to(self, self.eval(node.args[0]), fn, node)
        args = [self.eval(a) for a in node.args]
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        if any(isinstance(v, (Affine, Scalar)) for v in [*args, *kwargs.values()]):
            macro = self.implicit_macro(fn)
            if macro is not None:  # a helper of the program's: built in place, as a T.macro
                return self.expand_macro(macro, node, args, kwargs)
            name = getattr(fn, "__name__", repr(fn))
            raise self.error(node, f"'{name}' is ordinary Python: it runs at compile time and "
                                   "cannot take run-time values")
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # a compile-time helper failed: say where
            from ..layout.errors import LayoutError  # (here: tlc.layout imports numpy)

            # A T.Fragment's own message says what is wrong with the layout.
            text = str(e) if isinstance(e, LayoutError) else f"{type(e).__name__}: {e}"
            raise self.error(node, text) from None

