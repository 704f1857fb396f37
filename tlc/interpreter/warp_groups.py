"""Hand-written warp specialization: tile.ws bodies and the program's own
mbarriers (tile.init_barriers, tile.barrier_wait, tile.barrier_arrive).

A lone tile.ws body runs where it stands (its tile ops as the work of its
warpgroups). Consecutive tile.ws bodies (a producer's and the consumers',
each with its own loop, as TileLang's warp-specialized programs write them)
run as concurrent tasks, one per set of warpgroups (its bodies in order;
bodies of partly shared warpgroups one after the other), one task at a time: a task runs until it waits at a
barrier whose phase has not completed, then the next task that can go on
runs (round robin, starting from the first body), so each body sees the
others' arrivals as it would on the GPU. When every unfinished task waits,
no arrival can come: on the GPU the block would hang, here it is an error
at the first waiting task's barrier_wait.

An mbarrier is modelled as on the GPU: it counts arrivals down from its
count, a phase completes when they reach zero (the count starts again), and
a wait for a parity returns once the phase of that parity completed (the
first phase has parity 0; waiting for parity 1 before it completed returns
at once).
"""

from __future__ import annotations

import threading

import numpy as np

from .. import ir
from .program import handles
from .races import Tracker



class _Barriers:
    """The state of a buffer of mbarriers: per barrier, its arrival count,
    the arrivals its current phase still needs, and the phases completed.
    For tlc.interpreter.races, per barrier the clock its current phase has
    gathered from the bodies' arrivals and the clocks of completed phases."""

    def __init__(self, counts):
        self.counts = list(counts)
        self.pending = list(counts)
        self.completed = [0] * len(counts)
        self.tracker = None  # the races.Tracker the clocks below belong to
        self.gathered = {}  # barrier -> the current phase's clock
        self.phase_clocks = {}  # (barrier, phase) -> a completed phase's clock

    def clocks_of(self, tracker) -> None:
        if self.tracker is not tracker:
            self.tracker, self.gathered, self.phase_clocks = tracker, {}, {}

    def arrive(self, i: int, n: int, tracker=None, task=None) -> None:
        if tracker is not None:
            self.clocks_of(tracker)
            tracker.arrive(task, self.gathered.setdefault(
                i, np.zeros(len(tracker.names), np.int64)))
        self.pending[i] -= n
        while self.pending[i] <= 0:
            if i in self.gathered:
                self.phase_clocks[(i, self.completed[i])] = self.gathered.pop(i)
                self.phase_clocks.pop((i, self.completed[i] - 2), None)
            self.completed[i] += 1
            self.pending[i] += self.counts[i]

    def acquire(self, i: int, tracker, task, phase: int | None = None) -> None:
        """A wait of body `task` on barrier i returned: it takes in the clock of
        `phase` (by default the latest completed one)."""
        self.clocks_of(tracker)
        phase = self.completed[i] - 1 if phase is None else phase
        tracker.acquire(task, self.phase_clocks.get((i, phase)))


def body_warps(ws) -> tuple:
    """The warps a tile.ws body runs on (`warpgroups = [...]` or `warps = [...]`)."""
    attrs = ws.attributes
    if "warps" in attrs:
        return tuple(ir.DenseI64ArrayAttr(attrs["warps"]))
    return tuple(w for g in ir.DenseI64ArrayAttr(attrs["warpgroups"])
                 for w in range(4 * g, 4 * g + 4))


def _threads_running(op) -> int:
    """How many threads run `op` (outside a tile.parallel): its tile.ws body's,
    else its kernel's."""
    parent = op.operation.parent
    while parent is not None:
        if parent.name == "tile.ws":
            return 32 * len(body_warps(parent))
        if parent.name == "tile.kernel":
            return ir.IntegerAttr(parent.attributes["threads"]).value
        parent = parent.parent
    return 1


@handles("tile.ws")
def _ws(c, op):
    steps = c.steps(op.regions[0].blocks[0])

    def run(st):
        for step in steps:
            step(st)

    return run


class _Abort(BaseException):
    """Unwinds a task whose group failed in another task."""


class _Task:
    __slots__ = ("index", "ready", "done", "waiting", "thread")

    def __init__(self, index: int):
        self.index = index
        self.ready = None  # while waiting: a function saying whether it may go on
        self.done = False
        self.waiting = None  # while waiting: the error to raise if it never can


class _Scheduler:
    """Runs the tasks of consecutive T.ws bodies one at a time (see the
    module's docstring). `current` is the task allowed to run; `tracker`
    keeps their clocks for tlc.interpreter.races (`names`: each task's words
    in its messages)."""

    def __init__(self, names: list[str]):
        self.cv = threading.Condition()
        self.tasks = [_Task(i) for i in range(len(names))]
        self.current = None
        self.error = None  # the first error of any task (raised by the caller)
        self.tracker = Tracker(names)
        self.named = {}  # named barrier id -> _Barriers (one barrier: its generations)

    def _next(self, after: int):
        """The next task (round robin after `after`) that can run, or None."""
        n = len(self.tasks)
        for k in range(1, n + 1):
            t = self.tasks[(after + k) % n]
            if not t.done and (t.ready is None or t.ready()):
                return t
        return None

    def _hand_over(self, task) -> None:
        """`task` stops (it waits or is done): run the next that can, or stop all
        with a deadlock error when none can (under self.cv)."""
        nxt = self._next(task.index)
        if nxt is None and any(not t.done for t in self.tasks):
            stuck = next(t for t in self.tasks if not t.done)
            self.error = self.error or stuck.waiting
        self.current = nxt if self.error is None else None
        self.cv.notify_all()

    def wait(self, task, ready, error) -> None:
        """Called by `task` at a barrier wait that `ready()` does not pass yet."""
        with self.cv:
            task.ready, task.waiting = ready, error
            self._hand_over(task)
            while self.current is not task and self.error is None:
                self.cv.wait()
            task.ready = task.waiting = None
            if self.error is not None:
                raise _Abort()

    def run(self, bodies, st) -> None:
        errors = np.geterr()  # numpy's error handling is per thread: the caller's

        def main(task, body):
            with self.cv:
                while self.current is not task and self.error is None:
                    self.cv.wait()
            try:
                if self.error is None:
                    forked = st.fork()
                    forked.warpgroups = (self, task)
                    self.tracker.enter(task.index)
                    with np.errstate(**errors):
                        body(forked)
            except _Abort:
                pass
            except BaseException as e:  # noqa: BLE001 - re-raised by the caller
                with self.cv:
                    self.error = self.error or e
            finally:
                Tracker.leave()
            with self.cv:
                task.done = True
                self._hand_over(task)

        for task, body in zip(self.tasks, bodies):
            task.thread = threading.Thread(target=main, args=(task, body), daemon=True)
            task.thread.start()
        with self.cv:
            self.current = self.tasks[0]
            self.cv.notify_all()
        for task in self.tasks:
            task.thread.join()
        if self.error is not None:
            raise self.error


def concurrent_bodies(c, groups):
    """One step running consecutive tile.ws ops as concurrent tasks: `groups`
    lists, per set of warpgroups, its bodies (run in order by one task)."""
    def sequence(steps):
        def run(st):
            for step in steps:
                step(st)

        return run

    tasks = [sequence([s for s in (c.op(op) for op in ops) if s is not None])
             for ops in groups]
    names = [_describe(c, ops[0]) for ops in groups]

    def step(st):
        _Scheduler(names).run(tasks, st)

    return step


def _describe(c, ws) -> str:
    """'the T.ws body at FILE:LINE:COL (warpgroup 1)', for race messages."""
    warps = body_warps(ws)
    if len(warps) % 4 == 0 and all(warps[k] == warps[0] + k for k in range(len(warps))):
        groups = [w // 4 for w in warps[::4]]
        who = (f"warpgroup {groups[0]}" if len(groups) == 1 else
               "warpgroups " + ", ".join(str(g) for g in groups))
    else:
        who = "warps " + ", ".join(str(w) for w in warps)
    location = c.site(ws).location
    return f"the T.ws body{f' at {location}' if location is not None else ''} ({who})"


@handles("nvvm.barrier", "nvvm.barrier.arrive")
def _named_barrier(c, op):
    """T.sync_threads(id, count) (nvvm.barrier: arrive and wait) and
    T.named_barrier_arrive(id, count). Outside concurrent T.ws bodies the
    lanes run in lockstep: nothing to wait for. Between concurrent bodies a
    generation completes when `count` threads arrived (each body arrives with
    all its threads); a sync waits for its generation as a barrier_wait
    does, and orders what the arriving bodies did before it (races.py)."""
    operands = list(op.operands)
    if len(operands) < 2:  # the block's barrier: the lanes run in lockstep
        return None
    bar, count = c.slot(operands[0]), c.slot(operands[1])
    waits = op.operation.name == "nvvm.barrier"
    threads = _threads_running(op)
    site = c.site(op)

    def step(st):
        if st.warpgroups is None:
            return
        scheduler, task = st.warpgroups
        i, n = int(st.env[bar]), int(st.env[count])
        # A generation of the named barrier is a phase of a one-barrier _Barriers.
        named = scheduler.named.setdefault(i, _Barriers([n]))
        generation = named.completed[0]
        named.arrive(0, threads, scheduler.tracker, task.index)
        if not waits:
            return
        if named.completed[0] <= generation:
            scheduler.wait(task, lambda: named.completed[0] > generation, site.error(
                f"waits at named barrier {i} for {named.pending[0]} more of its "
                f"{named.counts[0]} threads while every other T.ws body beside it has "
                f"finished or waits too: on the GPU the block would hang", st.block))
        named.acquire(0, scheduler.tracker, task.index, generation)

    return step


@handles("tile.init_barriers")
def _init(c, op):
    bars = c.slot(op.operands[0])
    counts = list(ir.DenseI64ArrayAttr(op.attributes["counts"]))

    def step(st):
        buf = st.env[bars]
        buf.barriers = _Barriers(counts)
        buf.written[...] = True

    return step


def _state(site, st, buf):
    state = getattr(buf, "barriers", None)
    if state is None:
        raise site.error("uses mbarriers no tile.init_barriers initialised", st.block)
    return state


def _index(site, st, state, value) -> int:
    i = int(value)
    if not 0 <= i < len(state.counts):
        raise site.error(f"barrier {i} is out of range: there are {len(state.counts)}",
                         st.block)
    return i


@handles("tile.barrier_wait")
def _wait(c, op):
    site = c.site(op)
    bars, index, parity = (c.slot(v) for v in op.operands)

    def step(st):
        state = _state(site, st, st.env[bars])
        i = _index(site, st, state, st.env[index])
        want = int(st.env[parity]) & 1
        # Phase p (0, 1, ...) has parity p % 2; the wait returns once the
        # latest phase of that parity before the current one completed.
        if state.completed[i] % 2 != want:
            if st.warpgroups is not None:
                scheduler, task = st.warpgroups
                state.acquire(i, scheduler.tracker, task.index)
            return
        if st.warpgroups is None:
            raise site.error(
                f"waits for parity {want} of barrier {i}, whose phase {state.completed[i]} "
                f"still needs {state.pending[i]} of its {state.counts[i]} arrivals, and no "
                f"T.ws body runs beside this code to arrive: on the GPU it would hang",
                st.block)
        scheduler, task = st.warpgroups
        scheduler.wait(task, lambda: state.completed[i] % 2 != want, site.error(
            f"waits for parity {want} of barrier {i} (phase {state.completed[i]}, "
            f"{state.pending[i]} of its {state.counts[i]} arrivals missing) while every "
            f"other T.ws body beside it has finished or waits too: on the GPU the block "
            f"would hang", st.block))
        state.acquire(i, scheduler.tracker, task.index)

    return step


@handles("tile.barrier_arrive")
def _arrive(c, op):
    site = c.site(op)
    bars, index = (c.slot(v) for v in op.operands)
    threads = _threads_running(op)

    def step(st):
        state = _state(site, st, st.env[bars])
        i = _index(site, st, state, st.env[index])
        if st.warpgroups is None:
            state.arrive(i, threads)
        else:
            scheduler, task = st.warpgroups
            state.arrive(i, threads, scheduler.tracker, task.index)

    return step

