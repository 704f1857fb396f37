"""`compile_flags=` (and `pass_configs={"tl.device_compile_flags": ...}`):
TileLang's extra nvcc flags, as tlc reads them.

TileLang compiles CUDA C++ with nvcc; tlc emits PTX from MLIR in process and
the CUDA driver assembles it. So each flag is one of three kinds here, as
pass_configs keys are:

- honoured: `--use_fast_math` (`-use_fast_math`) compiles with fast math, as
  `tl.enable_fast_math` does;
- no use: it tunes the C++ compile or ptxas's report, which tlc does not
  have: preprocessor macros (`-D`, `-U`), include paths (`-I`), warnings
  (`-W...`, `--diag-suppress`), C++ language switches (`-std=`,
  `--expt-relaxed-constexpr`, `--expt-extended-lambda`), `-O3` (tlc's LLVM
  pipeline optimizes at O3), and ptxas's `-v` and `--register-usage-level`
  (in `--ptxas-options=` / `-Xptxas`); accepted and reported once per
  process with a warning, changing nothing;
- anything else asks for something tlc cannot give (a register cap, debug
  line info, another architecture, another optimization level): an error.
"""

from __future__ import annotations

import warnings

from .errors import CompilationError

_NO_USE_PREFIXES = {
    "-D": "a preprocessor macro: tlc compiles no CUDA C++",
    "-U": "a preprocessor macro: tlc compiles no CUDA C++",
    "-I": "an include path: tlc compiles no CUDA C++",
    "-isystem": "an include path: tlc compiles no CUDA C++",
    "-W": "a C++ warning switch: tlc compiles no CUDA C++",
    "--diag-suppress": "a C++ warning switch: tlc compiles no CUDA C++",
    "-diag-suppress": "a C++ warning switch: tlc compiles no CUDA C++",
    "-std=": "a C++ language switch: tlc compiles no CUDA C++",
    "--std=": "a C++ language switch: tlc compiles no CUDA C++",
    "--expt-": "a C++ language switch: tlc compiles no CUDA C++",
}
_NO_USE_EXACT = {
    "-O3": "tlc's LLVM pipeline optimizes at O3 already",
    "--optimize=3": "tlc's LLVM pipeline optimizes at O3 already",
}
_PTXAS_NO_USE = {
    "-v": "tlc runs no ptxas (the CUDA driver assembles the PTX); "
          "kernel.get_kernel_source() shows the PTX",
    "--verbose": "tlc runs no ptxas (the CUDA driver assembles the PTX); "
                 "kernel.get_kernel_source() shows the PTX",
    "-O3": "the driver assembles the PTX at its highest level already",
}
_PTXAS_NO_USE_PREFIXES = {
    "--register-usage-level=": "a ptxas heuristic; the CUDA driver assembles tlc's PTX",
}
_FAST_MATH = ("--use_fast_math", "-use_fast_math", "--use-fast-math")

_WARNED: set[str] = set()


def _no_use(flag: str, why: str) -> None:
    if flag not in _WARNED:
        _WARNED.add(flag)
        warnings.warn(f"tlc: compile flag '{flag}' has no effect in tlc ({why})", stacklevel=5)


def _ptxas_options(flag: str, options: str) -> None:
    for option in filter(None, (o.strip() for o in options.split(","))):
        why = _PTXAS_NO_USE.get(option) or next(
            (w for p, w in _PTXAS_NO_USE_PREFIXES.items() if option.startswith(p)), None)
        if why is None:
            raise CompilationError(f"compile flag '{flag}': the ptxas option '{option}' is not "
                                   "supported by tlc (the CUDA driver assembles its PTX)")
        _no_use(f"{flag.split('=')[0]} {option}", why)


def apply_compile_flags(flags, what: str = "compile_flags") -> bool:
    """Checks TileLang's nvcc flags (a list, or one string of flags separated
    by spaces): errors for flags tlc cannot honour, one warning per no-use
    flag per process; returns whether fast math was asked for."""
    if flags is None:
        return False
    if isinstance(flags, str):
        flags = flags.split()
    if not isinstance(flags, (list, tuple)) or not all(isinstance(f, str) for f in flags):
        raise CompilationError(f"{what} must be a list of strings, got {flags!r}")
    fast_math = False
    pending_ptxas = False
    for flag in flags:
        if pending_ptxas:  # `-Xptxas -v`: the option is the next word
            _ptxas_options("-Xptxas", flag)
            pending_ptxas = False
        elif flag in _FAST_MATH:
            fast_math = True
        elif flag in _NO_USE_EXACT:
            _no_use(flag, _NO_USE_EXACT[flag])
        elif flag.startswith(("--ptxas-options=", "-Xptxas=")):
            _ptxas_options(flag, flag.split("=", 1)[1])
        elif flag in ("-Xptxas", "--ptxas-options"):
            pending_ptxas = True
        elif (why := next((w for p, w in _NO_USE_PREFIXES.items() if flag.startswith(p)),
                          None)) is not None:
            _no_use(flag, why)
        else:
            raise CompilationError(f"{what}: the flag '{flag}' is not supported by tlc (it "
                                   "emits PTX from MLIR in process; honoured: "
                                   "--use_fast_math; C++-only flags are accepted and change "
                                   "nothing)")
    if pending_ptxas:
        raise CompilationError(f"{what}: '-Xptxas' needs an option after it")
    return fast_math
