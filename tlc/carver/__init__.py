"""TileLang's `tilelang.carver` names that programs import: only
`carver.arch.driver.get_num_sms()` (persistent kernels size their grid by
it). TileLang's config recommender (templates, roller) is not part of tlc:
tlc.autotune tunes over the configs a program lists."""

from . import arch

__all__ = ["arch"]
