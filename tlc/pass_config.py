"""`PassConfigKey` and `pass_configs=`: TileLang's compiler switches, as tlc reads them.

Each TileLang key is one of three kinds here:

- honoured: tlc applies it (`tl.disable_wgmma` compiles sm_90a gemms on mma.sync;
  `tl.enable_fast_math` lets float arithmetic contract and approximate and
  flushes f32 denormals;
  `tl.disable_tma_lower` and `tl.disable_warp_specialized`, or
  `tl.enable_auto_warp_specialization` False, keep sm_90a's cp.async pipeline
  instead of the warp-specialized TMA producer, and shared tiles' stores to
  global tensors as thread copies instead of TMA stores);
- no use: it tunes a TileLang pass or a tool tlc does not have (TVM's CSE,
  nvcc, TileLang's own checks), or disables something tlc never does; it is
  accepted and reported once per process with a warning, and changes nothing;
- cannot honour: it asks for an output or a behaviour tlc cannot give (custom
  TVM passes, dumping CUDA source): an error.

`tl.device_compile_flags` holds nvcc flags: read as `compile_flags=` is
(tlc.compile_flags).

A key TileLang does not have is an error too, except tlc's own
`tlc.disable_stream_k` (`PassConfigKey.TLC_DISABLE_STREAM_K`), honoured: True
compiles sm_90a's persistent warp-specialized GEMMs without stream-K (a
NO_STREAM_K target, `tile-pipeline-loops{stream-k=false}`), for comparisons;
other targets have no stream-K, and there it is accepted and changes nothing.
"""

from __future__ import annotations

import enum
import warnings
from dataclasses import dataclass

from .compile_flags import apply_compile_flags
from .errors import CompilationError


class PassConfigKey(str, enum.Enum):
    """TileLang's pass-config keys (`tilelang.PassConfigKey`), by their TileLang
    names, and tlc's own (`tlc.*`)."""

    TL_SIMPLIFY = "tl.Simplify"
    TL_DISABLE_BUFFER_INIT_CHECK = "tl.disable_buffer_init_check"
    TL_DISABLE_DATA_RACE_CHECK = "tl.disable_data_race_check"
    TL_DISABLE_PRELOWER_SEMANTIC_CHECK = "tl.disable_prelower_semantic_check"
    TL_DISABLE_WARP_SPECIALIZED = "tl.disable_warp_specialized"
    TL_ENABLE_AUTO_WARP_SPECIALIZATION = "tl.enable_auto_warp_specialization"
    TL_ENABLE_FAST_MATH = "tl.enable_fast_math"
    TL_PTXAS_REGISTER_USAGE_LEVEL = "tl.ptxas_register_usage_level"
    TL_DEVICE_COMPILE_FLAGS = "tl.device_compile_flags"
    TL_EMIT_LINE_DIRECTIVES = "tl.emit_line_directives"
    TL_CONFIG_INDEX_BITWIDTH = "tl.config_index_bitwidth"
    TL_LAYOUT_COST_MODEL = "tl.layout_cost_model"
    TL_DISABLE_TMA_LOWER = "tl.disable_tma_lower"
    TL_DISABLE_SAFE_MEMORY_ACCESS = "tl.disable_safe_memory_legalize"
    TL_DISABLE_VECTORIZE_256 = "tl.disable_vectorize_256"
    TL_ENABLE_ASYNC_COPY = "tl.enable_async_copy"
    TL_ENABLE_LOWER_LDGSTG = "tl.enable_lower_ldgstg"
    TL_ENABLE_LOWER_LDGSTG_PREDICATED = "tl.enable_lower_ldgstg_predicated"
    TL_ENABLE_VECTORIZE_PLANNER_VERBOSE = "tl.enable_vectorize_planner_verbose"
    TL_DISABLE_WGMMA = "tl.disable_wgmma"
    TL_DEBUG_MERGE_SHARED_MEMORY_ALLOCATIONS = "tl.debug_merge_shared_memory_allocations"
    TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE = "tl.enable_aggressive_shared_memory_merge"
    TL_DISABLE_SHARED_MEMORY_REUSE = "tl.disable_shared_memory_reuse"
    TL_DISABLE_SHUFFLE_ELECT = "tl.disable_shuffle_elect"
    TL_DISABLE_LOOP_UNSWITCHING = "tl.disable_loop_unswitching"
    TL_DISABLE_THREAD_STORAGE_SYNC = "tl.disable_thread_storage_sync"
    TL_FORCE_LET_INLINE = "tl.force_let_inline"
    TL_AST_PRINT_ENABLE = "tl.ast_print_enable"
    TL_LAYOUT_VISUALIZATION_ENABLE = "tl.layout_visualization_enable"
    TL_LAYOUT_VISUALIZATION_FORMATS = "tl.layout_visualization_formats"
    TL_STORAGE_REWRITE_DETECT_INPLACE = "tl.storage_rewrite_detect_inplace"
    TL_DISABLE_OUT_OF_BOUND_WARNING = "tl.disable_out_of_bound_warning"
    TL_ENABLE_DUMP_IR = "tl.enable_dump_ir"
    TL_DUMP_IR_DIR = "tl.dump_ir_path"
    TL_PASS_PROFILE = "tl.pass_profile"
    TIR_ENABLE_EQUIV_TERMS_IN_CSE = "tir.enable_equiv_terms_in_cse_tir"
    TIR_DISABLE_CSE = "tir.disable_cse_tir"
    TIR_SIMPLIFY = "tir.Simplify"
    TIR_DISABLE_STORAGE_REWRITE = "tir.disable_storage_rewrite"
    TIR_DISABLE_VECTORIZE = "tir.disable_vectorize"
    TIR_USE_ASYNC_COPY = "tir.use_async_copy"
    TIR_ENABLE_DEBUG = "tir.enable_debug"
    TIR_MERGE_STATIC_SMEM = "tir.merge_static_smem"
    TIR_ADD_LOWER_PASS = "tir.add_lower_pass"
    TIR_NOALIAS = "tir.noalias"
    CUDA_KERNELS_OUTPUT_DIR = "cuda.kernels_output_dir"
    TLC_DISABLE_STREAM_K = "tlc.disable_stream_k"


_K = PassConfigKey

# Keys tlc applies (see PassConfigEffects).
_HONOURED = {_K.TL_DISABLE_WGMMA, _K.TL_DISABLE_TMA_LOWER, _K.TL_DISABLE_WARP_SPECIALIZED,
             _K.TL_ENABLE_AUTO_WARP_SPECIALIZATION, _K.TL_ENABLE_FAST_MATH,
             _K.TLC_DISABLE_STREAM_K}

#: The suffix of a target name whose TMA feature is turned off (what the TMA
#: and warp-specialization keys do); tlc.compiler.targets reads it.
NO_TMA = "+no_tma"

#: The suffix of an sm_90a target name compiled without stream-K
#: (tlc.disable_stream_k), after NO_TMA: tile-pipeline-loops{stream-k=false}.
NO_STREAM_K = "+no_stream_k"

#: The suffix of a target name compiled with fast math (tl.enable_fast_math):
#: float arithmetic may be contracted (fma) and approximated, and f32
#: denormals are flushed to zero.
FAST_MATH = "+fast_math"

# Keys that ask for what tlc cannot give, with why.
_CANNOT = {
    _K.TIR_ADD_LOWER_PASS: "tlc has no TVM passes to add to",
    _K.CUDA_KERNELS_OUTPUT_DIR: "tlc writes no CUDA source; use @tlc.jit(debug_root_path=...) "
                                "for the PTX and IR",
    _K.TL_ENABLE_DUMP_IR: "use @tlc.jit(debug_root_path=...) for each stage's IR",
    _K.TL_DUMP_IR_DIR: "use @tlc.jit(debug_root_path=...) for each stage's IR",
    _K.TL_LAYOUT_VISUALIZATION_ENABLE: "use kernel.layouts() and tlc.layout.plot",
    _K.TL_LAYOUT_VISUALIZATION_FORMATS: "use kernel.layouts() and tlc.layout.plot",
}

# Why each remaining key has no use in tlc (reported once per process).
_NO_USE_DEFAULT = "it tunes a TileLang/TVM pass tlc does not have"
_NO_USE = {
    _K.TL_PTXAS_REGISTER_USAGE_LEVEL: "tlc does not run ptxas",
    _K.TL_DISABLE_SAFE_MEMORY_ACCESS: "tlc always masks out-of-bounds accesses",
    _K.TL_DISABLE_THREAD_STORAGE_SYNC: "tlc's barriers are placed by the compiler and kept",
    _K.TL_DISABLE_DATA_RACE_CHECK: "tlc has no data-race check",
    _K.TL_DISABLE_BUFFER_INIT_CHECK: "tlc has no buffer-initialization check",
    _K.TL_DISABLE_OUT_OF_BOUND_WARNING: "tlc prints no out-of-bound warnings",
    _K.TL_CONFIG_INDEX_BITWIDTH: "tlc computes indices in 64 bits",
}

_WARNED: set[str] = set()


@dataclass(frozen=True)
class PassConfigEffects:
    """What the honoured keys of a `pass_configs` change."""

    disable_wgmma: bool = False
    # tl.disable_tma_lower, tl.disable_warp_specialized (or auto warp
    # specialization set False): sm_90a pipelined GEMM loops keep the cp.async
    # pipeline instead of a TMA producer warpgroup.
    disable_tma: bool = False
    # tl.enable_fast_math: contraction and approximations allowed, f32
    # denormals flushed (a FAST_MATH target).
    fast_math: bool = False
    # tlc.disable_stream_k: sm_90a persistent GEMMs without stream-K (a
    # NO_STREAM_K target).
    disable_stream_k: bool = False


def _key(key) -> PassConfigKey:
    if isinstance(key, PassConfigKey):
        return key
    if isinstance(key, str):
        # TileLang spells TIR keys "tir." or, in newer releases, "tirx.".
        name = "tir." + key[5:] if key.startswith("tirx.") else key
        try:
            return PassConfigKey(name)
        except ValueError:
            pass
    raise CompilationError(f"unknown pass_configs key {key!r} (TileLang's keys are the "
                           "values of tlc.PassConfigKey)")


def apply_pass_configs(pass_configs) -> PassConfigEffects:
    """Checks `pass_configs` (a dict of PassConfigKey or key strings -> values):
    errors for keys tlc cannot honour, one warning per no-use key per process,
    and the effects of the honoured ones."""
    if pass_configs is None:
        return PassConfigEffects()
    if not isinstance(pass_configs, dict):
        raise CompilationError(f"pass_configs must be a dict of PassConfigKey -> value, got "
                               f"{type(pass_configs).__name__}")
    disable_wgmma = disable_tma = fast_math = disable_stream_k = False
    for raw, value in pass_configs.items():
        key = _key(raw)
        if key == _K.TL_DEVICE_COMPILE_FLAGS:  # nvcc flags, as compile_flags=
            fast_math |= apply_compile_flags(value, f"pass_configs '{key.value}'")
            continue
        if key in _CANNOT:
            raise CompilationError(f"pass_configs key '{key.value}' is not supported by tlc: "
                                   f"{_CANNOT[key]}")
        if key in _HONOURED:
            if not isinstance(value, (bool, int)):
                raise CompilationError(f"pass_configs '{key.value}' must be True or False, "
                                       f"got {value!r}")
            if key == _K.TL_DISABLE_WGMMA:
                disable_wgmma = bool(value)
            elif key == _K.TL_ENABLE_AUTO_WARP_SPECIALIZATION:
                disable_tma |= not value
            elif key == _K.TL_ENABLE_FAST_MATH:
                fast_math = bool(value)
            elif key == _K.TLC_DISABLE_STREAM_K:
                disable_stream_k = bool(value)
            else:
                disable_tma |= bool(value)
        elif key.value not in _WARNED:
            _WARNED.add(key.value)
            why = _NO_USE.get(key, _NO_USE_DEFAULT)
            warnings.warn(f"tlc: pass_configs key '{key.value}' has no effect in tlc ({why})",
                          stacklevel=4)
    return PassConfigEffects(disable_wgmma=disable_wgmma, disable_tma=disable_tma,
                             fast_math=fast_math, disable_stream_k=disable_stream_k)
