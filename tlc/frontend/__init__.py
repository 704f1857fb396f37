"""The frontend: a @T.prim_func's Python source -> tile IR, every op stamped
with the user's file:line:col."""

from .prim_func import PrimFunc, prim_func

__all__ = ["PrimFunc", "prim_func"]
