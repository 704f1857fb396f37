"""The options of `@tlc.jit` and `tlc.compile` beyond out_idx, TileLang's names.

Each one takes effect or is an error naming it: `target` ("auto", "cuda",
"cuda -arch=sm_80" or an sm_* name), `pass_configs` (see tlc.pass_config),
`verbose` (one line per compilation on stderr), `debug_root_path` (the PTX and
each stage's IR written there), `execution_backend` (TileLang's backends all
mean tlc's one runtime: any name TileLang has is accepted, and one other than
"auto" is reported once), `target_host` and `compile_flags` (errors when set:
tlc has no host compiler and no nvcc).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from dataclasses import dataclass, field

from .compile_flags import apply_compile_flags
from .errors import CompilationError, Diagnostic, SourceLocation
from .pass_config import FAST_MATH, NO_STREAM_K, NO_TMA, PassConfigEffects, apply_pass_configs

_BACKENDS = ("auto", "dlpack", "ctypes", "cython", "nvrtc", "tvm_ffi", "torch")
_WARNED_BACKENDS: set[str] = set()
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_error(message: str) -> CompilationError:
    """A CompilationError at the innermost caller outside tlc (the user's
    `@tlc.jit(...)` or `tlc.compile(...)` line)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    where = None
    if frame is not None:
        where = SourceLocation(frame.f_code.co_filename, frame.f_lineno, 1)
    return CompilationError([Diagnostic(message, where)])


@dataclass(frozen=True)
class JitOptions:
    """Checked options; `target` is None for "the default target at compile time"."""

    target: str | None = None
    verbose: bool = False
    debug_root_path: str | None = None
    effects: PassConfigEffects = field(default_factory=PassConfigEffects)

    def resolve_target(self, default: str) -> str:
        """The architecture to compile for, `default` when none was given."""
        target = self.target or default
        if self.effects.disable_wgmma and target == "sm_90a":
            target = "sm_90"  # the same chip without the wgmma path
        elif self.effects.disable_tma and target == "sm_90a":
            target += NO_TMA  # wgmma, but the cp.async pipeline
        if self.effects.disable_stream_k and target.startswith("sm_90a"):
            target += NO_STREAM_K  # the only architecture with stream-K
        if self.effects.fast_math:
            target += FAST_MATH
        return target


def _target(target) -> str | None:
    if target is None or target == "cuda":
        return None
    if not isinstance(target, str):
        raise user_error(f"target must be a string such as \"sm_90a\", got {target!r}")
    if target == "auto":
        return _device_target()
    text = target
    if text.startswith("cuda"):
        parts = [p for p in text.split()[1:] if p.startswith(("-arch=", "-arch"))]
        if len(text.split()) != 1 + len(parts) or len(parts) != 1:
            raise user_error(f"target {target!r}: tlc reads only \"cuda -arch=sm_XX\" from a "
                             "TVM target string")
        text = parts[0].split("=", 1)[-1]
    from .compiler.targets import TARGETS

    if text not in TARGETS:
        raise user_error(f"unknown target {target!r} (known: auto, cuda, "
                         f"{', '.join(sorted(TARGETS))})")
    return text


def _device_target() -> str | None:
    """The current CUDA device's architecture, through torch when it is there
    (None, the default target, without torch or a GPU)."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    from .compiler.targets import TARGETS

    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")
    if arch not in TARGETS:
        raise user_error(f"target \"auto\": the GPU is {arch}, which tlc does not compile for "
                         f"(targets: {', '.join(sorted(TARGETS))})")
    return arch


def jit_options(target=None, execution_backend=None, target_host=None, verbose=False,
                pass_configs=None, debug_root_path=None, compile_flags=None) -> JitOptions:
    """Checks TileLang's jit/compile options; errors name the argument at the user's line."""
    if execution_backend is not None:
        if execution_backend not in _BACKENDS:
            raise user_error(f"unknown execution_backend {execution_backend!r} (TileLang's: "
                             f"{', '.join(_BACKENDS)})")
        if execution_backend != "auto" and execution_backend not in _WARNED_BACKENDS:
            _WARNED_BACKENDS.add(execution_backend)
            warnings.warn(f"tlc: execution_backend={execution_backend!r} has no effect: tlc "
                          "launches every kernel through its own CUDA-driver runtime",
                          stacklevel=3)
    if target_host is not None:
        raise user_error("the argument 'target_host' is not supported by tlc (kernels are "
                         "launched from Python through tlc's runtime; there is no host code)")
    if not isinstance(verbose, bool):
        raise user_error(f"verbose must be True or False, got {verbose!r}")
    if debug_root_path is not None and not isinstance(debug_root_path, (str, os.PathLike)):
        raise user_error(f"debug_root_path must be a folder path, got {debug_root_path!r}")
    try:
        effects = apply_pass_configs(pass_configs)
        if apply_compile_flags(compile_flags):  # --use_fast_math
            effects = dataclasses.replace(effects, fast_math=True)
    except CompilationError as e:
        raise user_error(str(e)) from None
    return JitOptions(_target(target), verbose,
                      os.fspath(debug_root_path) if debug_root_path is not None else None,
                      effects)


def report(options: JitOptions, kernel, what: str) -> None:
    """verbose and debug_root_path: says what happened and writes the stages."""
    if options.verbose:
        print(f"tlc: {what} '{kernel.name}' for {kernel.artifact['target']}", file=sys.stderr)
    if options.debug_root_path:
        os.makedirs(options.debug_root_path, exist_ok=True)
        base = os.path.join(options.debug_root_path, kernel.name)
        with open(base + ".ptx", "w") as f:
            f.write(kernel.get_kernel_source())
        for stage, text in kernel.stages.items():
            with open(f"{base}.{stage}.mlir", "w") as f:
                f.write(text)
