"""tlc's compilation stages, each a function named after what it produces.

parse -> optimize (layouts, shared memory) -> lower_to_gpu (per-thread code)
-> lower_to_nvvm -> emit_ptx. Every stage is a textual pass pipeline, the
same string a lit RUN line gives tlc-opt, so any dumped IR replays there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .. import ir, timing
from ..passmanager import PassManager
from ..errors import CompilationError, Diagnostic, SourceLocation
from .buffer_names import name_buffers
from .fast_math import mark_fast_arithmetic, mark_flush_to_zero
from .diagnostics import compilation_error
from .targets import PTX_FEATURES, Target, get_target


OPTIMIZE_PIPELINE = (
    "builtin.module(tile-divide-warpgroup-roles,tile-select-mma,tile-infer-layout,tile-pipeline-loops,"
    "tile-insert-mbarriers,tile-select-tma-stores,tile-swizzle-shared-memory,tile-allocate-shared-memory,tile-insert-barriers)"
)


def optimize_pipeline(target: Target) -> str:
    """OPTIMIZE_PIPELINE for `target`: a NO_STREAM_K target (tlc.disable_stream_k)
    runs tile-pipeline-loops with its stream-k option off."""
    if target.stream_k:
        return OPTIMIZE_PIPELINE
    return OPTIMIZE_PIPELINE.replace("tile-pipeline-loops,", "tile-pipeline-loops{stream-k=false},")


GPU_PIPELINE = ("builtin.module(tile-outline-kernels,convert-tile-to-gpu,"
                "tile-assume-param-alignment,canonicalize,cse)")


def nvvm_pipeline(target: Target) -> str:
    return (
        "builtin.module(lower-affine,"
        f"nvvm-attach-target{{chip={target.chip} features={PTX_FEATURES} O=3}},"
        "gpu.module(tile-lower-fp8-conversions,convert-scf-to-cf,mem2reg,convert-nvgpu-to-nvvm,"
        "convert-gpu-to-nvvm,tile-grid-constant-params,"
        "convert-nvvm-to-llvm,canonicalize,cse),"
        "reconcile-unrealized-casts)"
    )


PTX_PIPELINE = "builtin.module(gpu-module-to-binary{format=isa})"


# What each stage is, for the timing table (tlc --time-passes, TLC_TIMING=1).
STAGE_TITLES = {
    "optimized": "tile passes",
    "gpu": "lowering to GPU",
    "nvvm": "lowering to NVVM",
    "ptx": "LLVM NVPTX",
    "llvm": "LLVM bitcode",
}


def new_context() -> ir.Context:
    """A context with every dialect tlc uses loaded."""
    with timing.stage("context + dialects"):
        ctx = ir.Context()
        ctx.load_all_available_dialects()
    return ctx


#: Deepest nesting of `{`, `(` and `[` that tile IR text may have. MLIR's
#: parser recurses per level and overflows the stack near a few thousand; real
#: programs stay below a hundred.
MAX_NESTING = 256


def _check_nesting(text: str, filename: str) -> None:
    depth = 0
    line, col = 1, 0
    in_string = False
    pairs = {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}
    for ch in text:
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
        elif ch == '"':
            in_string = not in_string
        elif not in_string and ch in pairs:
            depth += pairs[ch]
            if depth > MAX_NESTING:
                raise CompilationError([Diagnostic(
                    f"the IR nests deeper than {MAX_NESTING} levels of brackets",
                    SourceLocation(filename, line, col))])


#: A dense array of `index` elements (`array<index: ...>`), which MLIR's
#: parser asserts on instead of rejecting (its elements must be iN or fN).
_INDEX_ARRAY = re.compile(r"\barray\s*<\s*index\b")


def _check_dense_arrays(text: str, filename: str) -> None:
    for m in _INDEX_ARRAY.finditer(text):
        if text.count('"', 0, m.start()) % 2:  # inside a string
            continue
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        raise CompilationError([Diagnostic(
            "a dense array's elements are integers (i1 to i64) or floats, not index: "
            "write array<i64: ...>", SourceLocation(filename, line, col))])


def parse(text: str, context: ir.Context, filename: str = "<tile>") -> ir.Module:
    """Parses tile IR text, raising CompilationError at the faulty line."""
    _check_nesting(text, filename)
    _check_dense_arrays(text, filename)
    try:
        with context, timing.stage("parse tile IR"):
            module = ir.Module.parse(text)
    except ir.MLIRError as e:
        raise compilation_error(e, "invalid tile IR", filename) from None
    module.operation.attributes["tile.source"] = ir.StringAttr.get(filename, context)
    return module


def _buffer_name(module: ir.Module) -> str:
    attrs = module.operation.attributes
    return ir.StringAttr(attrs["tile.source"]).value if "tile.source" in attrs else "-"


def _pass_manager(pipeline: str, print_ir_after_all: bool) -> PassManager:
    pm = PassManager.parse(pipeline)
    pm.enable_verifier(False)  # run_pipeline verifies once, after the last pass
    if print_ir_after_all:
        pm.enable_ir_printing(print_after_all=True)
    return pm


def run_pipeline(module: ir.Module, pipeline: str, stage: str,
                 print_ir_after_all: bool = False) -> None:
    """Runs a textual pass pipeline in place; failures become CompilationError.
    In a timing session, the stage and each of its passes get a row.

    The IR is verified once, after the last pass, not after every pass as
    MLIR does by default: verifying tile IR with layouts costs 9-63 ms per
    kernel, and a stage of five passes paid it five times
    (bench/compile_time.md). tlc-opt, given the same pipeline text, still
    verifies after every pass, to find the pass at fault."""
    title = f"{stage}: {STAGE_TITLES[stage]}" if stage in STAGE_TITLES else stage
    with module.context, timing.stage(title) as row:
        try:
            if row is None:
                _pass_manager(pipeline, print_ir_after_all).run(module.operation)
            else:  # handed over: the timing report comes when it is destroyed
                timing.run_with_pass_timing(_pass_manager(pipeline, print_ir_after_all),
                                            module.operation, pipeline)
            with timing.stage("verify"):
                module.operation.verify()
        except ir.MLIRError as e:
            raise compilation_error(
                e, f"compilation failed in stage '{stage}'", _buffer_name(module)
            ) from None


def _to_python(attr):
    """Converts the metadata attribute tree (dict/array/str/bool/int) to Python values."""
    if isinstance(attr, ir.DictAttr):
        return {attr[i].name: _to_python(attr[i].attr) for i in range(len(attr))}
    if isinstance(attr, ir.ArrayAttr):
        return [_to_python(a) for a in attr]
    if isinstance(attr, ir.StringAttr):
        return attr.value
    if isinstance(attr, ir.BoolAttr):  # before IntegerAttr, which reads an i1 true as -1
        return attr.value
    if isinstance(attr, ir.IntegerAttr):
        return attr.value
    raise TypeError(f"unexpected metadata attribute {attr}")


def kernel_metadata(module: ir.Module) -> dict[str, dict]:
    """The launch metadata tile-outline-kernels put on the module."""
    attrs = module.operation.attributes
    if "tile.kernels" not in attrs:
        return {}
    return _to_python(attrs["tile.kernels"])


def binaries_of(module: ir.Module) -> dict[str, bytes]:
    """The object of each kernel (PTX text, or LLVM bitcode), from gpu.binary ops."""
    from ..dialects import gpu

    result = {}
    for op in module.body.operations:
        if op.operation.name != "gpu.binary":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        objects = ir.ArrayAttr(op.attributes["objects"])
        result[name.removesuffix("_kernel")] = gpu.ObjectAttr(objects[0]).object
    return result


def ptx_of(module: ir.Module) -> dict[str, str]:
    """The PTX of each kernel, by kernel name."""
    return {k: v.decode() for k, v in binaries_of(module).items()}


def llvm_bitcode(compiled: "CompiledModule", name: str | None = None) -> bytes:
    """LLVM bitcode of one kernel of a module compiled through the nvvm stage."""
    module = ir.Module.parse(compiled.stages["nvvm"], compiled.context)
    run_pipeline(module, "builtin.module(gpu-module-to-binary{format=llvm})", "llvm")
    objects = binaries_of(module)
    name = name or _only(objects)
    if name not in objects:
        raise CompilationError(f"no kernel named '{name}' (kernels: {', '.join(objects)})")
    return objects[name]


def _only(kernels) -> str:
    if len(kernels) != 1:
        raise CompilationError(f"the module has {len(kernels)} kernels "
                               f"({', '.join(sorted(kernels))}); choose one with --kernel")
    return next(iter(kernels))


@dataclass
class CompiledModule:
    """Everything one compilation produced: IR snapshots, PTX and metadata."""

    target: Target
    context: ir.Context | None = None
    stages: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, dict] = field(default_factory=dict)
    ptx: dict[str, str] = field(default_factory=dict)

    def artifact(self, name: str | None = None) -> dict:
        """The runtime artifact (a JSON-able dict) of one kernel."""
        if name is None:
            name = _only(self.metadata)
        if name not in self.metadata:
            raise CompilationError(f"no kernel named '{name}' (kernels: "
                                   f"{', '.join(sorted(self.metadata))})")
        meta = self.metadata[name]
        with timing.stage("artifact"):
            return self._artifact(name, meta)

    def _artifact(self, name: str, meta: dict) -> dict:
        from .. import __version__

        if "launches" in meta:  # several kernels, or global scratch
            return {
                "format": "tlc-kernel",
                "version": 2,
                "name": name,
                "target": self.target.arch,
                "params": meta["params"],
                "scratch": meta["scratch"],
                "kernels": [self._artifact(launch["name"], launch)
                            for launch in meta["launches"]],
                "tlc_version": __version__,
            }
        return {
            "format": "tlc-kernel",
            "version": 1,
            "name": name,
            "target": self.target.arch,
            "ptx": self.ptx[name],
            "threads": meta["threads"],
            "grid": meta["grid"],
            "shared_bytes": meta["shared_bytes"],
            "params": meta["params"],
            **({"tensor_maps": meta["tensor_maps"]} if meta.get("tensor_maps") else {}),
            **({"cooperative": True} if meta.get("cooperative") else {}),
            **({"cluster_dims": meta["cluster_dims"]} if meta.get("cluster_dims") else {}),
            "tlc_version": __version__,
        }


STAGES = ("tile", "optimized", "gpu", "nvvm", "ptx")


def compile_module(module: ir.Module, target: str | Target | None = None,
                   stop_after: str = "ptx", keep_ir: bool = False,
                   print_ir_after_all: bool = False) -> CompiledModule:
    """Compiles a tile-IR module (in place) for `target` through `stop_after`.

    The module's own `tile.target` is used when `target` is None; one that
    names another architecture than `target` is an error."""
    target = set_target(module, target)
    out = CompiledModule(target, module.context)
    steps = [
        ("optimized", optimize_pipeline(target)),
        ("gpu", GPU_PIPELINE),
        ("nvvm", nvvm_pipeline(target)),
        ("ptx", PTX_PIPELINE),
    ]
    with module.context, timing.stage("verify tile IR"):
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            raise compilation_error(e, "the tile IR does not verify", _buffer_name(module)) from None
    if target.fast_math:
        mark_fast_arithmetic(module)
    if keep_ir:
        with timing.stage("IR snapshot: tile"):
            out.stages["tile"] = str(module)
    for stage, pipeline in steps:
        if STAGES.index(stage) > STAGES.index(stop_after):
            break
        run_pipeline(module, pipeline, stage, print_ir_after_all)
        if stage == "nvvm" and target.fast_math:
            mark_flush_to_zero(module)
        if keep_ir and stage != "ptx":
            with timing.stage(f"IR snapshot: {stage}"):
                if stage == "optimized":
                    name_buffers(module)  # the buffers' names, for tlc.layout
                out.stages[stage] = _verified_text(module)
        if stage == "gpu":
            out.metadata = kernel_metadata(module)
    if stop_after == "ptx":
        with timing.stage("read PTX"):
            out.ptx = ptx_of(module)
    return out


def _verified_text(module: ir.Module) -> str:
    """The text of a module the pass manager has just verified (after its last
    pass): str() would verify it again, which the layouts of tile IR make
    costly (a third of a FlashAttention compile); the text is the same."""
    return module.operation.get_asm(assume_verified=True)


def set_target(module: ir.Module, target: str | Target | None) -> Target:
    """Puts the target on the module (as `tile.target`) and returns it."""
    attrs = module.operation.attributes
    if "tile.target" in attrs:
        text = str(attrs["tile.target"])
        existing = text[text.index('"') + 1:text.index('"', text.index('"') + 1)]
        if target is not None and get_target(target).arch != existing:
            raise CompilationError(
                f"{_buffer_name(module)}: the module is for {existing} (its tile.target) but "
                f"the target asked for is {get_target(target).arch}")
        if target is not None:  # what tile.target does not hold comes from the name asked for
            asked = get_target(target)
            return replace(get_target(existing), stream_k=asked.stream_k,
                           fast_math=asked.fast_math)
        return get_target(existing)
    target = get_target(target)
    with module.context:
        attrs["tile.target"] = ir.Attribute.parse(target.attribute_text)
    return target


def compile_text(text: str, target: str | Target | None = None, filename: str = "<tile>",
                 stop_after: str = "ptx", keep_ir: bool = False,
                 print_ir_after_all: bool = False) -> CompiledModule:
    """Parses and compiles tile IR text."""
    ctx = new_context()
    module = parse(text, ctx, filename)
    return compile_module(module, target, stop_after, keep_ir, print_ir_after_all)
