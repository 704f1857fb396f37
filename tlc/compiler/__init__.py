"""The tlc compiler: tile IR -> PTX plus launch metadata."""

from .pipeline import CompiledModule, compile_module, compile_text, new_context, parse
from .targets import DEFAULT_TARGET, TARGETS, Target, get_target

__all__ = [
    "CompiledModule",
    "DEFAULT_TARGET",
    "TARGETS",
    "Target",
    "compile_module",
    "compile_text",
    "get_target",
    "new_context",
    "parse",
]
