"""T.GemmWarpPolicy: how T.gemm spreads its output tile over the block's warps."""

from __future__ import annotations

import enum


class GemmWarpPolicy(enum.Enum):
    """How T.gemm spreads its output tile over the block's warps."""

    Square = "square"
    FullRow = "full_row"
    FullCol = "full_col"
