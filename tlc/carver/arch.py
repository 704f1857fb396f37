"""`from tilelang.carver.arch import driver`: the device's streaming
multiprocessor count for persistent kernels' grids."""

from __future__ import annotations

import types
import warnings

# The SM count of each target's reference chip, for compiling where there is
# no GPU to ask: sm_90a's H100 / H200 SXM, sm_80's A100 SXM.
_REFERENCE_SMS = {"sm_90a": 132, "sm_90": 132, "sm_80": 108, "sm_86": 84, "sm_89": 128}
_warned = False


def get_num_sms(device_id: int = 0) -> int:
    """The number of SMs of CUDA device `device_id` (through torch where it sees
    a GPU); with no GPU, that of the default target's reference chip (132 for
    sm_90a), with a warning, so that a persistent kernel still compiles."""
    global _warned
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_properties(device_id).multi_processor_count
    except ImportError:
        pass
    from ..jit import _default_target

    target = _default_target().split("+")[0]
    sms = _REFERENCE_SMS.get(target)
    if sms is None:
        raise RuntimeError(f"get_num_sms: no GPU to ask and no reference SM count for {target}")
    if not _warned:
        _warned = True
        warnings.warn(f"tlc: get_num_sms() sees no GPU; using {sms}, the SM count of "
                      f"{target}'s reference chip", stacklevel=2)
    return sms


driver = types.SimpleNamespace(get_num_sms=get_num_sms)

__all__ = ["driver", "get_num_sms"]
