"""Saving compiled kernels as artifacts that test/gpu/run_artifacts.py checks."""

import os

from tlc import runtime


def save_checked(artifact: dict, check: dict, path: str) -> None:
    """Writes `artifact` with a "check" entry (see test/gpu/run_artifacts.py)."""
    runtime.save_artifact(dict(artifact, check=check), path)
    print("wrote", os.path.basename(path))
