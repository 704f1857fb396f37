#!/usr/bin/env python3
"""The CPU interpreter and the compiled kernel agree on the same inputs,
family by family, with the compiler and the GPU on different machines.

    python test/gpu/interpreter_agreement.py build OUT_DIR   # here: compile + interpret
    python test/gpu/interpreter_agreement.py check OUT_DIR   # on the GPU: run + compare

`build` compiles each kernel to an artifact, draws its inputs (fixed seed),
runs the same kernel under tlc.interpreter on them and saves inputs and
interpreted outputs as NAME.npz beside NAME.tlcart. `check` needs only torch
with CUDA and the runtime: it launches each artifact on the saved inputs
(outputs NaN-poisoned first) and compares with the interpreted outputs.
Tolerances: elementwise exact; where the GPU sums in another order (gemm,
reductions, attention), a few ulps of the output dtype. Exits 1 on any
disagreement.
"""

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def _example(name):
    spec = importlib.util.spec_from_file_location(f"agreement_{name}",
                                                  REPO / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases():
    """(name, factory, args, kwargs, out_idx, input shapes and dtypes, rtol, atol)."""
    gemm, softmax = _example("gemm"), _example("softmax")
    chained, fa = _example("chained_gemm"), _example("attention")
    h = "float16"
    cases = []
    for layout in ("NN", "NT", "TN"):
        ta, tb = layout[0] == "T", layout[1] == "T"
        m, n, k = 300, 260, 200
        cases.append((f"gemm_{layout}_mma_sync", gemm.matmul.factory, (m, n, k),
                      dict(trans_A=ta, trans_B=tb), [-1],
                      [((k, m) if ta else (m, k), h), ((n, k) if tb else (k, n), h)],
                      2e-3, 1e-2))
    for layout in ("NN", "NT"):
        tb = layout == "NT"
        cases.append((f"gemm_{layout}_wgmma_async", gemm.matmul.factory, (512, 512, 512),
                      dict(block_M=128, block_N=256, block_K=64, threads=256, num_stages=4,
                           trans_B=tb), [-1],
                      [((512, 512), h), ((512, 512), h)], 2e-3, 1e-2))
    cases.append(("softmax", softmax.softmax.factory, (300, 1024), {}, [-1],
                  [((300, 1024), "float32")], 1e-5, 1e-7))
    cases.append(("rowmax_of_product", softmax.rowmax_of_product.factory, (300, 512, 256), {},
                  [-1], [((300, 256), h), ((256, 512), h)], 1e-5, 1e-4))
    cases.append(("chained_gemm_scaled", chained.chained.factory, (300, 64, 64, 64),
                  dict(scale=0.5), [-1], [((300, 64), h), ((64, 64), h), ((64, 64), h)],
                  2e-3, 2e-2))
    for dim in (64, 128):
        for causal in (False, True):
            cases.append((f"flash_attention_d{dim}{'_causal' if causal else ''}",
                          fa.attention.factory, (1, 2, 256, dim, causal), {}, [3],
                          [((1, 256, 2, dim), h)] * 3, 2e-3, 2e-3))
    # GQA 4, 200 queries (no block divides them), in both layouts.
    for layout in ("BSHD", "BHSD"):
        q_shape, kv_shape = fa.qkv_shapes(1, 4, 1, 200, 128, layout)
        cases.append((f"attention_gqa4_s200_{layout.lower()}_causal", fa.attention.factory,
                      (1, 4, 200, 128, True), dict(heads_kv=1, layout=layout), [3],
                      [(q_shape, h), (kv_shape, h), (kv_shape, h)], 2e-3, 2e-3))
    return cases


def build(out: Path) -> None:
    import tlc
    from tlc.frontend.tile_file import load_tile_file

    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    # Elementwise, from examples/elementwise.tile (outputs passed in, not returned).
    tile_kernels = load_tile_file(str(REPO / "examples" / "elementwise.tile"))
    for name, shapes in (("vadd", [(1000, 1000)] * 3),):
        prim = tile_kernels[name]
        tlc.compile(prim, target="sm_90a").save(str(out / f"{name}.tlcart"))
        a, b = (rng.standard_normal(s).astype("float32") for s in shapes[:2])
        c = np.full(shapes[2], np.nan, np.float32)
        tlc.interpret(prim, a, b, c)
        np.savez(out / f"{name}.npz", a, b, c)
        (out / f"{name}.json").write_text(json.dumps(
            {"inputs": 2, "outputs": 1, "rtol": 0.0, "atol": 0.0}))
        print("built", name)
    for name, factory, args, kwargs, out_idx, inputs, rtol, atol in _cases():
        compiled = tlc.jit(factory, out_idx=out_idx, target="sm_90a")(*args, **kwargs)
        compiled.save(str(out / f"{name}.tlcart"))
        arrays = [rng.standard_normal(shape).astype(dtype) for shape, dtype in inputs]
        interpreted = tlc.jit(factory, out_idx=out_idx, interpret=True)(*args, **kwargs)
        result = interpreted(*arrays)
        outputs = list(result) if isinstance(result, (tuple, list)) else [result]
        np.savez(out / f"{name}.npz", *arrays, *[np.asarray(o) for o in outputs])
        (out / f"{name}.json").write_text(json.dumps(
            {"inputs": len(arrays), "outputs": len(outputs), "rtol": rtol, "atol": atol}))
        print("built", name)


def check(out: Path) -> int:
    import torch

    sys.path.insert(0, str(REPO))
    from tlc import runtime

    failed = 0
    for meta_path in sorted(out.glob("*.json")):
        name = meta_path.stem
        meta = json.loads(meta_path.read_text())
        data = np.load(out / f"{name}.npz")
        arrays = [data[f"arr_{i}"] for i in range(meta["inputs"] + meta["outputs"])]
        inputs, expected = arrays[:meta["inputs"]], arrays[meta["inputs"]:]
        kernel = runtime.load_artifact(str(out / f"{name}.tlcart"))
        tensors = [torch.from_numpy(a).cuda() for a in inputs]
        outs = [torch.full(e.shape, float("nan"), dtype=getattr(torch, str(e.dtype)),
                           device="cuda") for e in expected]
        kernel(*tensors, *outs)
        torch.cuda.synchronize()
        for got, want in zip(outs, expected):
            want_t = torch.from_numpy(want)
            err = (got.cpu().float() - want_t.float()).abs().max().item()
            try:
                torch.testing.assert_close(got.cpu(), want_t, rtol=meta["rtol"],
                                           atol=meta["atol"])
                print(f"PASS {name} max_abs_err={err:.3g}")
            except AssertionError as e:
                failed += 1
                print(f"FAIL {name} max_abs_err={err:.3g}: {str(e).splitlines()[0]}")
    print(f"{len(list(out.glob('*.json'))) - failed} agree, {failed} disagree")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("build", "check"):
        sys.exit(__doc__)
    where = Path(sys.argv[2])
    sys.exit(build(where) if sys.argv[1] == "build" else check(where))
