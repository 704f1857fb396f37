"""Python builders of the `tile` dialect (generated from TableGen)."""

from ._tile_ops_gen import *  # noqa: F403
from ._tile_ops_gen import _Dialect  # noqa: F401
from ._tile_enum_gen import *  # noqa: F403
