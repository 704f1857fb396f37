"""TileLang's `tilelang.engine` names that programs import.

TileLang compiles through CUDA C++ (or HIP, or C for the host) and lets a
program rewrite that source before it is compiled. tlc generates PTX from
its own IR: there is no such source, so registering a post-processing
callback is an error (importing the names is not).
"""

from .callback import register_c_postproc, register_cuda_postproc, register_hip_postproc

__all__ = ["register_c_postproc", "register_cuda_postproc", "register_hip_postproc"]
