"""T.GemmWarpPolicy: how T.gemm spreads its output tile over the block's warps."""

from __future__ import annotations

import enum


class GemmWarpPolicy(enum.Enum):
    """How T.gemm spreads its output tile over the block's warps.

    Square: each warp's sub-tile as square as the warp count allows. FullRow:
    as many warps along M as the rows allow (each a multiple of 16 rows: all of
    them where the rows suffice, so each warp holds whole rows), the rest
    along N. FullCol: the same along N. TileLang's rules.
    """

    Square = "square"
    FullRow = "full_row"
    FullCol = "full_col"
