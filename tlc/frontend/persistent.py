"""T.Persistent: a loop over the tiles of a domain, strided by the grid.

    for bx, by in T.Persistent([tiles_m, tiles_n], wave_size, index):

Each block walks the tiles `index`, `index + wave_size`, ... of the domain
(wave_size is usually the grid size and index the block index), in
TileLang's order: the last dimension cut into groups of `group_size` tiles
(clamped to [1, last extent], the last group padded), the group index
outermost, then the other dimensions row-major, then the offset in the
group, so that consecutive tiles walk a band of group_size columns down all
rows (what makes the walk L2-friendly); a padded or past-the-end tile is
skipped. The loop is an scf.for over the waves whose body runs under an
scf.if guard when a tile can be out of range; the coordinates are index
values bound to the loop's names.
"""

from __future__ import annotations

import ast
import math

from .. import ir
from ..dialects import arith, scf
from ..language import loops
from .intrinsic_args import bind_args
from .values import Affine, index_value


def _static(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def persistent_loop(gen, node) -> None:
    """`for c0, ..., cn in T.Persistent(domain, wave_size, index, group_size=8):`"""
    gen.require_kernel(node, "T.Persistent")
    if gen.parallel_depth:
        raise gen.error(node.iter, "T.Persistent cannot be inside T.Parallel (it is a loop of "
                                   "the whole block over tiles)")
    a = bind_args(gen, node.iter, loops.Persistent)
    dom_node = a["domain"]
    domain = gen.eval(dom_node)
    if isinstance(domain, (int, Affine)) and not isinstance(domain, bool):
        domain = [domain]
    if not isinstance(domain, (tuple, list)) or not domain:
        raise gen.error(dom_node, f"T.Persistent's domain is a list of tile counts, got "
                                  f"{gen.describe(domain)}")
    sizes = []
    for d in domain:
        gen.check_index(d, dom_node, "a T.Persistent domain extent")
        if _static(d) is not None and d <= 0:
            raise gen.error(dom_node, f"a T.Persistent domain extent must be positive, got {d}")
        sizes.append(d)
    wave = gen.check_index(gen.eval(a["wave_size"]), a["wave_size"], "T.Persistent's wave_size")
    if _static(wave) is not None and wave <= 0:
        raise gen.error(a["wave_size"], f"T.Persistent's wave_size must be positive, got {wave}")
    start = gen.check_index(gen.eval(a["index"]), a["index"], "T.Persistent's index")
    group = gen.eval(a["group_size"])
    if _static(group) is None or group <= 0:
        raise gen.error(a["group_size"], f"T.Persistent's group_size must be a positive "
                                         f"compile-time integer, got {gen.describe(group)}")
    target = node.target
    names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    if len(names) != len(sizes) or not all(isinstance(n, ast.Name) for n in names):
        raise gen.error(target, f"T.Persistent over a domain of {len(sizes)} dimension(s) gives "
                                f"{len(sizes)} coordinate(s), to {len(sizes)} name(s)")

    index = ir.IndexType.get()
    const = lambda v: arith.constant(index, v)  # noqa: E731
    values = [index_value(s) for s in sizes]
    last = sizes[-1]
    static = all(_static(s) is not None for s in sizes) and _static(wave) is not None
    if _static(last) is not None:
        group = max(1, min(group, last))
        groups = -(-last // group)
        g_value, groups_value = const(group), const(groups)
    else:  # clamp at run time
        g_value = arith.maxui(const(1), arith.minui(const(group), values[-1]))
        groups_value = arith.ceildivui(values[-1], g_value)
    # the padded ("virtual") domain and the number of waves over it
    if static:
        padded = math.prod(sizes[:-1]) * groups * group
        waves = -(-padded // wave)
        padded_value, waves_value = const(padded), const(waves)
        guard_total = waves * wave != padded
        guard_last = padded != math.prod(sizes)
    else:
        padded_value = arith.muli(groups_value, g_value)
        for v in values[:-1]:
            padded_value = arith.muli(padded_value, v)
        waves_value = arith.ceildivui(padded_value, index_value(wave))
        guard_total = guard_last = True

    loop = scf.ForOp(const(0), waves_value, const(1))
    with ir.InsertionPoint(loop.body):
        linear = arith.addi(arith.muli(loop.induction_variable, index_value(wave)),
                            index_value(start))
        rest = linear
        offset = arith.remui(rest, g_value)
        rest = arith.divui(rest, g_value)
        coords = [None] * len(sizes)
        # TileLang's order: the group of last-dimension tiles outermost, so
        # consecutive tiles walk a band of group_size columns down the rows.
        for i in range(len(sizes) - 2, -1, -1):
            coords[i] = arith.remui(rest, values[i])
            rest = arith.divui(rest, values[i])
        group_index = rest
        coords[-1] = arith.addi(arith.muli(group_index, g_value), offset)
        cond = None
        if guard_total:
            cond = arith.cmpi(arith.CmpIPredicate.ult, linear, padded_value)
        if guard_last:
            inside = arith.cmpi(arith.CmpIPredicate.ult, coords[-1], values[-1])
            cond = inside if cond is None else arith.andi(cond, inside)
        guard = scf.IfOp(cond) if cond is not None else None
        where = ir.InsertionPoint(guard.then_block) if guard else ir.InsertionPoint(loop.body)
        with where, gen.region("loop", node, [n.id for n in names]):
            for n, c, s in zip(names, coords, sizes):
                gen.bind(n.id, Affine.leaf(c))
                if _static(s) is not None:
                    gen.ranges[c] = (0, s - 1)
            gen.visit_body(node.body)
            if guard:
                scf.YieldOp([])
        scf.YieldOp([])
