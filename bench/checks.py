"""Saving compiled kernels as artifacts that test/gpu/run_artifacts.py checks."""

import os

from tlc import runtime


def save_checked(artifact: dict, check: dict, path: str) -> None:
    """Writes `artifact` with a "check" entry (see test/gpu/run_artifacts.py)."""
    runtime.save_artifact(dict(artifact, check=check), path)
    print("wrote", os.path.basename(path))


def save_checked_programs(checks, out: str, archs=("sm_90a", "sm_80")) -> None:
    """Compiles each (prim_func, check) of `checks` for every arch of `archs`
    into OUT/<name>_<arch>.tlcart."""
    import tlc

    os.makedirs(out, exist_ok=True)
    for prim, check in checks:
        for arch in archs:
            save_checked(tlc.compile(prim, target=arch).artifact, check,
                         os.path.join(out, f"{prim.name}_{arch}.tlcart"))
