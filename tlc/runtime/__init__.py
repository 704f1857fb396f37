"""tlc.runtime: load kernel artifacts produced by the tlc compiler and launch
them on NVIDIA GPUs.

Pure Python over ctypes and libtlc_runtime.so (a thin layer over the CUDA
driver API): it imports anywhere, and needs a GPU and driver only at launch.

    k = tlc.runtime.load_artifact("vadd.tlcart")
    k(a, b, c)                # torch tensors, __cuda_array_interface__ or
    tlc.runtime.synchronize() # __dlpack__ objects, and Python scalars
"""

from .args import Param
from .artifact import FORMAT, SUFFIX, VERSION, Kernel, load_artifact, save_artifact
from .driver import synchronize
from .dtypes import DTYPES
from .errors import ArgumentError, ArtifactError, LaunchError
from .sequence import KernelSequence
from .grid import GridExpr


def torch_if_gpu():
    """torch when it is installed and sees a CUDA device, else None (so a
    script can compile everywhere and run where a GPU is)."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None

__all__ = [
    "DTYPES", "FORMAT", "SUFFIX", "VERSION", "ArgumentError", "ArtifactError",
    "GridExpr", "Kernel", "KernelSequence", "LaunchError", "Param", "load_artifact",
    "save_artifact", "synchronize", "torch_if_gpu",
]
