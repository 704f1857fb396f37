"""A T.Pipelined loop whose body the program splits into T.ws bodies.

TileLang's hand-written producer/consumer GEMMs put their `with T.ws(...)`
bodies (or `if tx < 128: ... else: ...` branches over whole warpgroups)
inside `for ko in T.Pipelined(n, num_stages=S)`, with one shared tile
per operand and one barrier per direction, waited as if the loop ran one
iteration at a time (`T.barrier_wait(compute_is_done, (ko + 1) % 2)`,
`T.barrier_wait(data_is_ready, ko % 2)`). The bodies run on different
warpgroups, so there is nothing to reorder; num_stages is the depth of the
ring between them. With S > 1 the loop is built as the program would be
written by hand with S stages:

- each shared buffer written in one body of the loop (or the loop's own
  code) and used in another gets S stages (an allocation with a leading
  dimension of S, laid out as stages); iteration j of the loop uses stage
  j % S;
- each barrier list something in the loop arrives at (T.barrier_arrive, a
  T.tma_copy's barrier) gets S copies; iteration j uses copy j % S, which
  completes one phase every S iterations, so a wait for parity p(ko) becomes
  a wait for parity (j // S + p(start)) % 2. That is only the same program
  when p flips from each iteration to the next (`ko % 2`, `(ko + 1) % 2`):
  any other parity is an error at the wait.

The producer can then run up to S iterations ahead of the consumers. Those
buffers and barriers cannot be used outside the loop (which stage would it
be?): an error at the use. With S of 0 or 1 the loop is the sequential
loop the program wrote.
"""

from __future__ import annotations

import ast

from .. import ir
from ..dialects import arith, tile
from ..errors import CompilationError
from .intrinsic_args import called_name
from .stages import stage_buffer
from .values import Affine, BufferRef, NoFlow, index_value

# The T.* calls that write a buffer: the position (and keyword) of that buffer.
_WRITERS = {"copy": (1, "dst"), "tma_copy": (1, "dst"), "c2d_im2col": (1, "dst"),
            "im2col": (1, "dst"), "fill": (0, "buffer"), "clear": (0, "buffer"),
            "gemm": (2, "C"), "wgmma_gemm": (2, "C"), "access_ptr": (0, "base")}
_ARRIVALS = ("barrier_arrive", "mbarrier_arrive", "cp_async_barrier_noinc")


def _base(node) -> ast.Name | None:
    """The name a buffer expression starts from: `A_s`, `A_s[0, :]`, `bars[i]`."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def ws_bodies(gen, loop: ast.For) -> tuple[list, list]:
    """The warpgroup bodies in the loop's body: those of its `with T.ws(...)`
    statements and of its `if`s on the thread index that become bodies
    (tlc.frontend.thread_ranges), as statement lists, and the statements of
    the loop's body that hold them."""
    from .thread_ranges import warp_branches

    bodies, holders = [], []
    for stmt in loop.body:
        withs = [n for n in ast.walk(stmt) if isinstance(n, ast.With) and n.items
                 and called_name(n.items[0].context_expr) == "ws"]
        if withs:
            bodies += [w.body for w in withs]
            holders.append(stmt)
        elif isinstance(stmt, ast.If) and (branches := warp_branches(gen, stmt)) is not None:
            bodies += [stmts for _, stmts in branches]
            holders.append(stmt)
    return bodies, holders


def _macro_of(gen, call):
    """The T.macro a call calls (by name), else None."""
    from .prim_func import Macro

    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None
    try:
        fn = gen.lookup(call.func.id, call)
    except CompilationError:
        return None
    return fn if isinstance(fn, Macro) else None


def _accesses(gen, body, loop, depth: int = 0) -> tuple[set[str], set[str]]:
    """(written, used): names of the buffers `body` (statements) writes (copy
    destinations, gemm accumulators, fills, element stores) and all names it
    uses, looking into the T.macro calls it makes (their parameters standing
    for the call's arguments). A macro holding a T.ws body is an error: its
    bodies' accesses could not be told apart."""
    written, used = set(), set()
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name):
                used.add(n.id)
            if (m := _macro_of(gen, n)) is not None and depth < 8:
                params = [a.arg for a in m.node.args.args]
                bound = dict(zip(params, n.args))
                bound.update({k.arg: k.value for k in n.keywords if k.arg})
                if any(isinstance(w, ast.With) and w.items and
                       called_name(w.items[0].context_expr) == "ws" for w in ast.walk(m.node)):
                    raise gen.error(n, (
                        f"'{m.name}' holds a T.ws body, and the T.Pipelined loop at line "
                        f"{loop.lineno} gives its bodies' buffers one copy per stage: write "
                        "the T.ws in the loop's own body (or use num_stages=0)"))
                for name in _accesses(gen, m.node.body, loop, depth + 1)[0]:
                    if name in bound and (b := _base(bound[name])) is not None:
                        written.add(b.id)
                continue
            if (writer := _WRITERS.get(called_name(n))) is not None:
                pos, key = writer
                arg = n.args[pos] if len(n.args) > pos else next(
                    (k.value for k in n.keywords if k.arg == key), None)
                if (b := _base(arg)) is not None:  # (an access_ptr counts, read or not)
                    written.add(b.id)
            targets = n.targets if isinstance(n, ast.Assign) else \
                [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Subscript) and (b := _base(t)) is not None:
                    written.add(b.id)
    return written, used


def _arrived(loop: ast.For) -> dict[str, ast.AST]:
    """Names of the barrier lists the loop arrives at -> the first such use."""
    names = {}
    for n in ast.walk(loop):
        called = called_name(n)
        arg = None
        if called in _ARRIVALS:
            arg = n.args[0] if n.args else next(
                (k.value for k in n.keywords if k.arg in ("mbarrier", "barrier")), None)
        elif called == "tma_copy":
            arg = next((k.value for k in n.keywords if k.arg == "barrier"), None)
        if (b := _base(arg)) is not None:
            names.setdefault(b.id, n)
    return names


class _StagedAway(NoFlow):
    """The mark a buffer or barrier staged by a pipelined T.ws loop leaves after it."""

    def __init__(self, line: int, what: str):
        super().__init__("loop", line)
        self.what = what

    def message(self, name: str) -> str:
        return (f"'{name}' is {self.what} of the T.Pipelined loop at line {self.line}, "
                "which gives it one copy per stage: it cannot be used after that loop")


class StagedBarriers:
    """A barrier list given one copy per stage: the index of this iteration's
    copies and what a wait's parity becomes."""

    def __init__(self, loop: ast.For, var: str, start, step: int, stages: int,
                 iteration: ir.Value, offset: ir.Value, depth: int):
        self.loop, self.var, self.start, self.step, self.stages = loop, var, start, step, stages
        self.iteration, self.offset = iteration, offset
        self.depth = depth  # the T.macro calls the loop is built in


def _alloc_of(buf: BufferRef):
    owner = buf.value.owner
    return owner if owner.name == "tile.alloc_shared" else None


def _stage_buffers(gen, loop: ast.For, stages: int, bodies, holders) -> tuple[list, list]:
    """The shared buffers and the barrier lists the loop stages, checked:
    [(name, BufferRef)] each (`bodies`, `holders`: ws_bodies)."""
    # Each warpgroup body, and the loop's other statements (run by every thread).
    groups = bodies + [[s for s in loop.body if s not in holders]]
    writes, uses = zip(*[_accesses(gen, g, loop) for g in groups])
    buffers = []
    for name in sorted(set().union(*writes)):
        if not any(name in w and any(name in u for j, u in enumerate(uses) if j != i)
                   for i, w in enumerate(writes)):
            continue
        try:
            buf = gen.lookup(name, loop)
        except CompilationError:
            continue
        if isinstance(buf, BufferRef) and buf.place == "shared":
            buffers.append((name, buf))
    barriers = []
    for name, node in _arrived(loop).items():
        buf = gen.lookup(name, node)
        if isinstance(buf, BufferRef) and buf.place == "barrier":
            barriers.append((name, buf))
    if not buffers and not barriers:
        raise gen.error(loop.iter, (
            f"num_stages={stages} has nothing to stage in this loop of T.ws bodies: no shared "
            "buffer is written in one body and used in another, and no barrier is arrived at "
            "in it (use num_stages=0 for a plain loop)"))
    for name, buf in buffers:
        alloc = _alloc_of(buf)
        if alloc is None or buf.static_shape() is None:
            raise gen.error(loop.iter, f"'{name}' is not a whole T.alloc_shared buffer: the "
                                       "T.ws bodies of a loop with num_stages > 1 can only "
                                       "stage those")
        if "layout" in alloc.attributes:
            raise gen.error(loop.iter, f"'{name}' has a layout of its own "
                                       f"({alloc.attributes['layout']}); the loop with "
                                       f"num_stages={stages} gives it one copy per stage, "
                                       "laid out as stages")
        if list(alloc.result.uses):
            raise gen.error(loop.iter, f"'{name}' is used before this loop, which gives it "
                                       f"one copy per stage (num_stages={stages}): use it "
                                       "only inside the loop, or use num_stages=0")
    for name, buf in barriers:
        users = [u.owner for u in buf.value.uses]
        if len(users) != 1 or users[0].name != "tile.init_barriers":
            raise gen.error(loop.iter, f"the barriers '{name}' are used before this loop, "
                                       f"which gives them one copy per stage "
                                       f"(num_stages={stages}): use them only inside the loop, "
                                       "or use num_stages=0")
    return buffers, barriers


def _restage(buf: BufferRef, stages: int) -> ir.Value:
    """A new allocation of `stages` copies of `buf` in place of its own."""
    old = buf.value.owner
    t = ir.MemRefType(buf.value.type)
    if buf.place == "barrier":
        init = next(iter(buf.value.uses)).owner
        counts = list(ir.DenseI64ArrayAttr(init.attributes["counts"])) * stages
        shape = [buf.shape[0] * stages]
    else:
        shape = [stages, *buf.shape]
    new_t = ir.MemRefType.get(shape, t.element_type, memory_space=t.memory_space)
    with ir.InsertionPoint(old), old.location:
        value = tile.alloc_shared(new_t)
        if buf.place == "barrier":
            tile.InitBarriersOp(value, counts)
    if buf.place == "barrier":
        init.erase()
    old.erase()
    return value


def build(gen, node: ast.For, start, stop, step: int, stages: int, found,
          sequential_loop) -> None:
    """The loop `node` of T.ws bodies (`found`: its ws_bodies) with `stages`
    stages (see the module's description); `sequential_loop` builds a plain
    loop with a prologue."""
    if stages <= 1:
        return sequential_loop(gen, node, start, stop, step)
    buffers, barriers = _stage_buffers(gen, node, stages, *found)
    values = {name: _restage(buf, stages) for name, buf in [*buffers, *barriers]}
    var = node.target.id

    def prologue(iv: ir.Value) -> None:
        index = ir.IndexType.get()
        cst = lambda v: arith.constant(index, v)  # noqa: E731
        iteration = arith.divui(arith.subi(iv, index_value(start)), cst(step))
        stage = arith.remui(iteration, cst(stages))
        for name, buf in buffers:
            staged = BufferRef(name, values[name], [stages, *buf.shape], buf.dtype, "shared")
            gen.scopes[-1][name] = stage_buffer(gen, node, staged, Affine.leaf(stage))
        for name, buf in barriers:
            offset = arith.muli(stage, cst(buf.shape[0]))
            staged = StagedBarriers(node, var, start, step, stages, iteration, offset,
                                    len(gen.macros))
            gen.scopes[-1][name] = BufferRef(name, values[name], list(buf.shape), buf.dtype,
                                             "barrier", stage=staged)

    sequential_loop(gen, node, start, stop, step, prologue)
    for name, _ in buffers:
        gen.scopes[-1][name] = _StagedAway(node.lineno, "a shared buffer staged by the T.ws "
                                                        "bodies")
    for name, _ in barriers:
        gen.scopes[-1][name] = _StagedAway(node.lineno, "a barrier list staged by the T.ws "
                                                        "bodies")


def _with_var(gen, name: str, value, fn):
    """fn() with the loop variable `name` bound to `value` for the while."""
    scope = next(s for s in reversed(gen.scopes) if name in s)
    saved = scope[name]
    scope[name] = value
    try:
        return fn()
    finally:
        scope[name] = saved


def barrier_index(buf: BufferRef, index) -> ir.Value:
    """Barrier `index` (an index) of the list `buf`: in this iteration's copy
    where a pipelined loop of T.ws bodies staged the list."""
    value = index_value(index)
    return value if buf.stage is None else arith.addi(value, buf.stage.offset)


def staged_parity(gen, staged: StagedBarriers, parity_node) -> ir.Value:
    """The parity a wait for `parity_node` (a parity of the loop's index)
    waits for on this iteration's copy of a staged barrier list."""
    var, step = staged.var, staged.step
    if len(gen.macros) != staged.depth or not any(var in scope for scope in gen.scopes):
        raise gen.error(parity_node, (
            f"a wait on a barrier the T.Pipelined loop at line {staged.loop.lineno} gives one "
            f"copy per stage (num_stages={staged.stages}) must be in the loop's own code, "
            f"where tlc rewrites its parity from the loop's index '{var}' (not in a T.macro)"))
    starts = [staged.start] if isinstance(staged.start, int) else [0, 1, 2, 3]
    for b in starts:
        got = [_with_var(gen, var, b + j * step, lambda: gen.eval(parity_node))
               for j in range(8)]
        if any(isinstance(p, bool) or not isinstance(p, int) for p in got) or any(
                (p - got[0] - j) % 2 for j, p in enumerate(got)):
            raise gen.error(parity_node, (
                f"the T.Pipelined loop at line {staged.loop.lineno} gives this barrier one copy "
                f"per stage (num_stages={staged.stages}), so tlc rewrites the parity waited "
                f"for; it takes a parity that flips every iteration of the loop "
                f"(`{var} % 2`, `({var} + 1) % 2`), not this one (or use num_stages=0 and "
                "stage the barriers by hand)"))
    first = (_with_var(gen, var, staged.start, lambda: gen.eval(parity_node))
             if isinstance(staged.start, int) else
             _with_var(gen, var, Affine.leaf(index_value(staged.start)),
                       lambda: gen.eval(parity_node)))
    index = ir.IndexType.get()
    base = arith.constant(index, first % 2) if isinstance(first, int) else \
        arith.andi(gen.index(first, parity_node, "the parity"), arith.constant(index, 1))
    rounds = arith.divui(staged.iteration, arith.constant(index, staged.stages))
    return arith.andi(arith.addi(rounds, base), arith.constant(index, 1))
