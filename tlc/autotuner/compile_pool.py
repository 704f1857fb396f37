"""Compiling autotuning candidates, in parallel worker processes when it can.

Compiling needs no GPU, so candidates compile in a ProcessPoolExecutor of
"forkserver" (or "spawn") workers: fresh interpreters, no state inherited from
a parent that may hold a CUDA context. A worker finds the factory by module
and qualified name, compiles one candidate exactly as the parent would
(@tlc.jit's path, the same target and options, the disk cache shared) and
sends back the artifact and IR; the parent builds the JITKernel. A factory
that cannot be imported by name (defined inside a function, or in a main
script without an `if __name__ == "__main__":` guard, which workers would
re-run) compiles serially in this process, as do the candidates of workers
that could not start.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import dataclasses
import importlib
import inspect
import multiprocessing
import os
import sys

from ..errors import CompilationError


@dataclasses.dataclass(frozen=True)
class Job:
    """One candidate: the factory's arguments, and how @tlc.jit compiles it."""

    args: tuple
    kwargs: dict
    out_idx: object
    options: object  # tlc.jit_options.JitOptions, its target resolved
    use_disk_cache: bool
    cache_dir: str | None = None  # the parent's kernel cache (workers outlive env changes)
    eager: bool = False  # an eager-style kernel: kwargs are EagerJITFactory.kernel_for's


@dataclasses.dataclass
class Outcome:
    """A compiled candidate (kernel) or why it failed (error)."""

    kernel: object = None
    error: str | None = None


def _locate(fn) -> tuple[str, str] | None:
    """(module, qualname) by which a worker imports `fn`, or None."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if module is None or "<" in qualname:
        return None
    obj = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if obj is None or inspect.unwrap(obj) is not fn:
        return None
    if module == "__main__" and not _guarded_main():
        return None
    return module, qualname


def _guarded_main() -> bool:
    """Whether the main script can be imported by workers without running its
    work: it is a file, and its top-level work sits under `if __name__ ==
    "__main__":` (workers import it under another name)."""
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    try:
        with open(path) as f:
            text = f.read()
    except (OSError, TypeError):
        return False
    return any(g in text for g in ('__name__ == "__main__"', "__name__ == '__main__'"))


def _factory(module: str, qualname: str):
    obj = importlib.import_module(module) if module != "__main__" else sys.modules["__main__"]
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return inspect.unwrap(obj)


def compile_job(fn, job: Job):
    """Compiles one candidate in this process: a JITKernel, or a CompilationError raised."""
    from ..jit import JITFactory

    if job.eager:
        from ..eager import EagerJITFactory

        return EagerJITFactory(fn, job.options).kernel_for(**job.kwargs)

    factory = JITFactory(fn, out_idx=job.out_idx, cache=job.use_disk_cache,
                         options=job.options)
    return factory(*job.args, **job.kwargs)


def _worker(module: str, qualname: str, job: Job) -> dict:
    """In a worker: the artifact and IR of one candidate, or its error message."""
    if job.cache_dir:
        os.environ["TLC_CACHE_DIR"] = job.cache_dir
    try:
        kernel = compile_job(_factory(module, qualname), job)
    except CompilationError as e:
        return {"error": str(e)}
    except Exception as e:  # a factory that raised: the candidate fails, the tuning goes on
        return {"error": f"{type(e).__name__}: {e}"}
    return {"artifact": kernel.artifact, "stages": kernel.stages}


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def default_workers() -> int:
    """TLC_AUTOTUNE_WORKERS, else the CPUs this process may use."""
    env = os.environ.get("TLC_AUTOTUNE_WORKERS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"TLC_AUTOTUNE_WORKERS must be an integer, got {env!r}") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def compile_all(fn, jobs: list[Job], workers: int, timeout: float | None, progress) -> list:
    """An Outcome per job, in order. `progress(done)` is called as each finishes."""
    where = _locate(fn) if workers > 1 and len(jobs) > 1 else None
    if where is None:
        return _compile_serially(fn, jobs, progress)
    from ..jit import JITKernel

    outcomes = [Outcome() for _ in jobs]
    pool = concurrent.futures.ProcessPoolExecutor(min(workers, len(jobs)), mp_context=_context())
    try:
        futures = [pool.submit(_worker, *where, job) for job in jobs]
        for done, (i, future) in enumerate(enumerate(futures), 1):
            try:
                result = future.result(timeout=timeout)
            except concurrent.futures.TimeoutError:
                outcomes[i].error = f"compilation took longer than timeout={timeout} s"
            except concurrent.futures.process.BrokenProcessPool:
                outcomes[i] = None  # workers could not start or died: compiled below
            else:
                if "error" in result:
                    outcomes[i].error = result["error"]
                else:
                    outcomes[i].kernel = JITKernel(result["artifact"], result["stages"],
                                                   jobs[i].out_idx)
            progress(done)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    lost = [i for i, o in enumerate(outcomes) if o is None]
    if lost:
        print(f"tlc.autotune: compile workers failed; compiling {len(lost)} candidates here",
              file=sys.stderr)
        redone = _compile_serially(fn, [jobs[i] for i in lost], lambda done: None)
        for i, outcome in zip(lost, redone):
            outcomes[i] = outcome
    return outcomes


def _compile_serially(fn, jobs: list[Job], progress) -> list:
    outcomes = []
    for done, job in enumerate(jobs, 1):
        try:
            outcomes.append(Outcome(kernel=compile_job(fn, job)))
        except CompilationError as e:
            outcomes.append(Outcome(error=str(e)))
        except Exception as e:
            outcomes.append(Outcome(error=f"{type(e).__name__}: {e}"))
        progress(done)
    return outcomes
