"""tlc: a tile-language compiler for NVIDIA GPUs."""

__version__ = "0.1.0"
