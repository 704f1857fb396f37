"""TileLang's manual software-pipeline annotations on `T.Pipelined`.

    for ko in T.Pipelined(n, stage=[0, 0, 1], order=[0, 1, 2]):   # copies ahead
    for ko in T.Pipelined(n, stage=[0, 1], order=[1, 0]):         # ... issued last

`stage` and `order` give each scheduled statement of the body (in source
order; `group` gathers statements under one entry) its pipeline stage and
its place in the emitted body. Replayable scalar binds (`base = ko * BK`)
take no entry; the legacy form, one entry per statement binds included, is
accepted with those entries ignored, as TileLang does.

tlc's pipeliner runs a loop's global -> shared copies ahead of the rest and
computes in program order, so it takes the schedules of that shape: every
global -> shared copy in stage 0, every other statement in the last stage
D - 1 (D = max(stage) + 1 is the loop's num_stages), the computing
statements ordered as written, and the copies ordered all before them (the
compiler's own schedule) or all after them (`copies_last`: each iteration
issues its copies ahead after computing). Any other schedule is an error at
the annotation naming the statement, never a schedule silently replaced.
"""

from __future__ import annotations

import ast

from ..errors import CompilationError

def _base_name(node):
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_bind(stmt) -> bool:
    """A scalar alias (`x = expr`, `x: T.int32 = expr`): no entry in the arrays."""
    if isinstance(stmt, ast.Assign):
        return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
    return (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
            and stmt.value is not None)


def _describe(stmt) -> str:
    text = ast.unparse(stmt).splitlines()[0]
    return text if len(text) <= 60 else text[:57] + "..."


class _Statement:
    def __init__(self, gen, node):
        self.node = node
        self.copy = self._is_prefetchable_copy(gen, node)
        self.stage = self.order = None

    @staticmethod
    def _is_prefetchable_copy(gen, node) -> bool:
        """`T.copy(global tensor[...], shared buffer[...])`."""
        from .values import BufferRef

        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            return False
        call = node.value
        try:
            if gen.eval(call.func) is not gen.T("copy"):
                return False
        except CompilationError:  # reported where the statement is compiled
            return False
        if len(call.args) < 2:
            return False
        places = []
        for arg in call.args[:2]:
            name = _base_name(arg)
            try:
                value = gen.lookup(name, arg) if name is not None else None
            except CompilationError:
                value = None
            places.append(value.place if isinstance(value, BufferRef) else None)
        return places == ["global", "shared"]


def _int_list(gen, node, what: str, allow_negative: bool = False) -> list[int]:
    value = gen.eval_static(node)
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise gen.error(node, f"T.Pipelined: {what} must be a list of integers, got {value!r}")
    if not allow_negative and any(v < 0 for v in value):
        raise gen.error(node, f"T.Pipelined: {what} entries must be >= 0, got {list(value)}")
    return list(value)


def manual_schedule(gen, loop, a) -> tuple[int, bool] | None:
    """(num_stages, copies_last) from `loop`'s stage/order/group annotations,
    or None when it has none (num_stages then applies as given)."""
    # None, TileLang's default, counts as not given.
    given = {k for k in ("stage", "order", "group")
             if k in a.given and gen.eval_static(a[k]) is not None}
    if not given:
        return None
    call = loop.iter
    if "stage" not in given or "order" not in given:
        missing = "stage" if "stage" not in given else "order"
        present = sorted(given - {missing})[0]
        at = next((kw for kw in call.keywords if kw.arg == present), a[present])
        raise gen.error(at, f"T.Pipelined: '{missing}' is needed with '{present}' (a manual "
                            "schedule gives both)")
    stage = _int_list(gen, a["stage"], "stage")
    order = _int_list(gen, a["order"], "order")
    if len(stage) != len(order):
        raise gen.error(a["order"], f"T.Pipelined: stage has {len(stage)} entries but order "
                                    f"has {len(order)}")
    statements = [s for s in loop.body if not isinstance(s, ast.Pass)]
    # Per statement: its schedule entry, or None for a scalar bind.
    everything = [None if _is_bind(s) else _Statement(gen, s) for s in statements]
    scheduled = [st for st in everything if st is not None]

    if "group" in given:
        groups = gen.eval_static(a["group"])
        if not isinstance(groups, (list, tuple)) or not all(
                isinstance(g, (list, tuple)) and g and all(
                    isinstance(i, int) and not isinstance(i, bool) for i in g) for g in groups):
            raise gen.error(a["group"], "T.Pipelined: group must be a list of nonempty lists "
                                        f"of statement indices, got {groups!r}")
        flat = [i for g in groups for i in g]
        if flat != list(range(len(scheduled))):
            raise gen.error(a["group"], f"T.Pipelined: group must list the loop's "
                                        f"{len(scheduled)} scheduled statements 0.."
                                        f"{len(scheduled) - 1} once each, in order, got "
                                        f"{[list(g) for g in groups]}")
        if len(groups) != len(stage):
            raise gen.error(a["stage"], f"T.Pipelined: {len(groups)} groups but {len(stage)} "
                                        "stage entries")
        for g, s, o in zip(groups, stage, order):
            for i in g:
                scheduled[i].stage, scheduled[i].order = s, o
    elif len(stage) == len(scheduled):
        for st, s, o in zip(scheduled, stage, order):
            st.stage, st.order = s, o
    elif len(stage) == len(statements):  # the legacy form: bind entries ignored
        for st, s, o in zip(everything, stage, order):
            if st is not None:
                st.stage, st.order = s, o
    else:
        raise gen.error(a["stage"], f"T.Pipelined: {len(stage)} stage entries, but the loop "
                                    f"body has {len(scheduled)} scheduled statements "
                                    f"({len(statements)} with its scalar binds)")
    if len(set(order)) != len(order):
        raise gen.error(a["order"], f"T.Pipelined: order entries must be distinct, got {order}")

    depth = max(st.stage for st in scheduled) + 1 if scheduled else 1
    if "num_stages" in a.given and gen.eval(a["num_stages"]) is not None:
        stages = gen.eval_int(a["num_stages"], "num_stages")
        if stages != depth:
            raise gen.error(a["num_stages"], f"T.Pipelined: num_stages={stages} but the stage "
                                             f"annotation makes the pipeline {depth} deep "
                                             f"(max(stage) + 1); give one or the other")
    if depth == 1:
        # One stage: nothing runs ahead; the statements run in order.
        if sorted(scheduled, key=lambda st: st.order) != scheduled:
            raise gen.error(a["order"], "T.Pipelined: with every statement in stage 0 tlc runs "
                                        "them as written; an order other than the source "
                                        "order is not supported")
        return 1, False
    last = depth - 1
    for st in scheduled:
        if st.copy and st.stage != 0:
            raise gen.error(st.node, f"T.Pipelined: this global -> shared copy is in stage "
                                     f"{st.stage}; tlc issues every such copy of a pipelined "
                                     f"loop ahead, in stage 0 of {depth}")
        if not st.copy and st.stage != last:
            raise gen.error(st.node, f"T.Pipelined: '{_describe(st.node)}' is in stage "
                                     f"{st.stage}; tlc runs only global -> shared copies ahead: "
                                     f"every other statement goes in the last stage ({last})")
    compute = [st for st in scheduled if not st.copy]
    copies = [st for st in scheduled if st.copy]
    for group, what in ((compute, "computing statements"), (copies, "copies")):
        for before, after in zip(group, group[1:]):
            if before.order > after.order:
                raise gen.error(after.node, f"T.Pipelined: the {what} must keep their source "
                                            f"order; '{_describe(after.node)}' has order "
                                            f"{after.order}, before it '{_describe(before.node)}' "
                                            f"{before.order}")
    if not copies or not compute or max(c.order for c in copies) < min(c.order for c in compute):
        return depth, False
    if min(c.order for c in copies) > max(c.order for c in compute):
        return depth, True
    raise gen.error(a["order"], "T.Pipelined: the copies must be ordered all before or all "
                                f"after the computing statements, got order {order}")
