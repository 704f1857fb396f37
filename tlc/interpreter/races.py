"""Races between concurrent T.ws bodies on shared memory.

On the GPU nothing orders the accesses of two warp-specialized bodies to a
shared buffer except the program's own mbarriers: the compiler's barriers
order only the threads of one body. The interpreter runs the bodies one at a
time (tlc.interpreter.warp_groups), so an unordered pair of accesses would
otherwise pass here in whatever order it ran and fail on the GPU. This
module finds such pairs. It keeps a vector clock per body (a task of the
scheduler): a barrier arrival publishes the arriving body's clock to the
barrier's phase and starts a new epoch of that body; a wait that returns
takes in the clock of the phase it waited for. Each element of a shared
buffer remembers the epoch of its last write and of each body's last read
since. An access is a race when the other body's conflicting access (a write
before a read or a write, a read before a write) does not happen before it:
its epoch is later than what the accessing body's clock knows of that body.

Accesses before the bodies start and after they all end are ordered with
everything (the block's own code runs before and after them), so each run
of concurrent bodies starts its records afresh. TMA copies and cp.async
land in the interpreter when issued by the issuing body, which is when the
GPU's completion is ordered for the barrier's waiters too (their bytes
arrive before the phase completes).
"""

from __future__ import annotations

import threading

import numpy as np

_current = threading.local()  # .task: (Tracker, task index) in a body's thread


class Tracker:
    """The clocks of one run of concurrent T.ws bodies (`names`: how an
    error names each body)."""

    def __init__(self, names: list[str]):
        self.names = names
        n = len(names)
        self.clocks = [np.zeros(n, np.int64) for _ in range(n)]
        for t in range(n):
            self.clocks[t][t] = 1
        self.sites = []  # the sites of recorded writes (indices in the shadows)
        self.site_ids = {}

    def enter(self, task: int) -> None:
        """The calling thread runs body `task` from now on."""
        _current.task = (self, task)

    @staticmethod
    def leave() -> None:
        _current.task = None

    # -- barriers ---------------------------------------------------------------

    def arrive(self, task: int, phase_clock: np.ndarray) -> None:
        """Body `task` arrives at a barrier whose current phase has gathered
        `phase_clock` so far (updated in place); its next accesses are a new epoch."""
        np.maximum(phase_clock, self.clocks[task], out=phase_clock)
        self.clocks[task][task] += 1

    def acquire(self, task: int, phase_clock: np.ndarray | None) -> None:
        """Body `task`'s wait returned on a completed phase with `phase_clock`."""
        if phase_clock is not None:
            np.maximum(self.clocks[task], phase_clock, out=self.clocks[task])

    # -- accesses ---------------------------------------------------------------

    def _site_id(self, site) -> int:
        key = id(site)
        if key not in self.site_ids:
            self.site_ids[key] = len(self.sites)
            self.sites.append(site)
        return self.site_ids[key]

    def access(self, buf, index, write: bool, site, block) -> None:
        cells = buf.cells()
        if index is not None:
            cells = cells[index]
        cells = np.asarray(cells).reshape(-1)
        if cells.size == 0:
            return
        task = _current.task[1]
        shadow = buf.race_shadow(self)
        clock = self.clocks[task]
        writer = shadow.writer[cells]
        other = (writer >= 0) & (writer != task)
        if other.any():
            late = np.zeros(cells.shape, bool)
            late[other] = shadow.write_epoch[cells[other]] > clock[writer[other]]
            if late.any():
                k = int(np.argmax(late))
                raise self._race(buf, cells[k], "writes" if write else "reads",
                                 int(writer[k]), "wrote",
                                 self.sites[int(shadow.write_site[cells[k]])], site, block)
        if write:
            for u in range(len(self.names)):
                if u == task:
                    continue
                late = shadow.read_epoch[u, cells] > clock[u]
                if late.any():
                    k = int(np.argmax(late))
                    raise self._race(buf, cells[k], "writes", u, "read",
                                     self.sites[int(shadow.read_site[u, cells[k]])], site,
                                     block)
            shadow.writer[cells] = task
            shadow.write_epoch[cells] = clock[task]
            shadow.write_site[cells] = self._site_id(site)
            shadow.read_epoch[:, cells] = 0
        else:
            shadow.read_epoch[task, cells] = clock[task]
            shadow.read_site[task, cells] = self._site_id(site)

    def _race(self, buf, cell, verb, other, other_verb, other_site, site, block):
        task = _current.task[1]
        root = buf.root or buf  # the records are the allocation's
        at = [int(i) for i in np.unravel_index(int(cell), root.shape)]
        element = f"element {at} of {root.describe()}"
        where = f" at {other_site.location}" if other_site.location is not None else ""
        return site.error(
            f"{self.names[task]} {verb} {element}, which {self.names[other]} {other_verb}"
            f"{where} with no barrier ordering the two: on the GPU either may come first "
            f"(only the program's T.barrier_arrive / T.barrier_wait order two T.ws bodies)",
            block)


class Shadow:
    """Per element of a shared buffer's storage: its last writer (a task, or
    -1) with the write's epoch and site, and each task's last read since."""

    __slots__ = ("tracker", "writer", "write_epoch", "write_site", "read_epoch", "read_site")

    def __init__(self, tracker: Tracker, size: int):
        n = len(tracker.names)
        self.tracker = tracker
        self.writer = np.full(size, -1, np.int16)
        self.write_epoch = np.zeros(size, np.int64)
        self.write_site = np.zeros(size, np.int32)
        self.read_epoch = np.zeros((n, size), np.int64)
        self.read_site = np.zeros((n, size), np.int32)


def note(buf, index, write: bool, site, block, active=None) -> None:
    """Records an access of `buf` (its elements `index`, None: all of them;
    index arrays of lanes, of which only those `active` marks run) by the
    T.ws body the calling thread runs, if any, raising at a race. Costs a
    check and nothing more outside concurrent bodies."""
    if buf.space != "shared":
        return
    task = getattr(_current, "task", None)
    if task is None:
        return
    if active is not None:
        shape = np.broadcast_shapes(*[np.shape(i) for i in index], np.shape(active))
        lanes = np.broadcast_to(active, shape)
        index = tuple(np.broadcast_to(i, shape)[lanes] for i in index)
    task[0].access(buf, index, write, site, block)
