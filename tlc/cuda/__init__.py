"""TileLang's `tilelang.cuda` helpers programs import (tilelang.cuda.intrinsics)."""
