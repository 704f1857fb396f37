"""Fast math (TileLang's `tl.enable_fast_math`, a FAST_MATH target).

Two marks on the module, both read by LLVM's NVPTX backend:

- every float arithmetic and math op of the tile IR gets `fastmath<fast>`
  (kept by the passes that clone it, turned into LLVM's fast-math flags by the
  lowering): a multiply and an add may contract to one fma, a division may be
  approximated (`div.approx` / `div.full`), reassociation is allowed;
- each kernel (llvm.func) gets the attribute "denormal-fp-math-f32" =
  "preserve-sign": f32 instructions flush denormals to zero (`.ftz`), as
  nvcc's `--use_fast_math` does.
"""

from __future__ import annotations

from .. import ir

#: Ops that carry arith's fast-math flags.
FLAGGED = frozenset({
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.negf",
    "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf",
    "math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.rsqrt", "math.tanh",
    "math.sin", "math.cos", "math.powf", "math.absf", "math.fma",
})


def mark_fast_arithmetic(module: ir.Module) -> None:
    """`fastmath<fast>` on the float ops of a tile-IR module."""
    with module.context:
        fast = ir.Attribute.parse("#arith.fastmath<fast>")

        def visit(op):
            if op.name in FLAGGED:
                op.attributes["fastmath"] = fast
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)


def mark_flush_to_zero(module: ir.Module) -> None:
    """The LLVM attribute that flushes f32 denormals, on every kernel function
    of a module lowered to the LLVM dialect; and the module flag that tells
    libdevice's functions (`__nv_exp2f` behind `T.exp2`, ...) the same, so
    that they take their flush-to-zero forms (`ex2.approx.ftz.f32`: one MUFU
    instruction instead of four with the denormal fix-up)."""
    with module.context, ir.Location.unknown():
        entry = ir.Attribute.parse('["denormal-fp-math-f32", "preserve-sign,preserve-sign"]')
        flags = ('llvm.module_flags '
                 '[#llvm.mlir.module_flag<override, "nvvm-reflect-ftz", 1 : i32>]')
        gpu_modules = []

        def visit(op):
            if op.name == "llvm.func":
                attrs = op.attributes
                old = list(attrs["passthrough"]) if "passthrough" in attrs else []
                attrs["passthrough"] = ir.ArrayAttr.get(old + [entry])
            elif op.name == "gpu.module":
                gpu_modules.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        for gpu_module in gpu_modules:
            body = gpu_module.regions[0].blocks[0]
            ir.InsertionPoint.at_block_begin(body).insert(ir.Operation.parse(flags))
