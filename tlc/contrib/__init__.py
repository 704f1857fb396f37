"""TileLang's `tilelang.contrib` helpers programs import (tilelang.contrib.nvcc)."""
