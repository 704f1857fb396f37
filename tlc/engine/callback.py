"""`tilelang.engine.callback`: source post-processing hooks, which tlc has no
source for (it emits PTX from MLIR, not CUDA C++). The decorators import;
using one raises NotImplementedError rather than registering a function that
would never run."""

from __future__ import annotations


def _refuse(what: str, source: str):
    def register(func=None, override: bool = True):
        raise NotImplementedError(
            f"{what}: tlc generates PTX from its own IR, not {source}, so there is no "
            f"source for a callback to rewrite (kernel.get_kernel_source() shows the PTX)")
    register.__name__ = what
    register.__doc__ = f"TileLang's `{what}`: an error in tlc (no {source} to post-process)."
    return register


register_cuda_postproc = _refuse("register_cuda_postproc", "CUDA C++")
register_cuda_postproc_callback = _refuse("register_cuda_postproc_callback", "CUDA C++")
register_hip_postproc = _refuse("register_hip_postproc", "HIP")
register_hip_postproc_callback = _refuse("register_hip_postproc_callback", "HIP")
register_c_postproc = _refuse("register_c_postproc", "host C")
