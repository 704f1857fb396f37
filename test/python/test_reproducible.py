"""Compilation is reproducible: the same kernel gives the same PTX and IR when
compiled twice in one process (the second compile reuses what the first one
set up) and in a fresh process; the IR snapshots are the verified IR's text."""

import json
import subprocess
import sys

import tlc
from tlc.compiler import pipeline
from tlc.compiler.buffer_names import name_buffers
from tlc.frontend.tile_file import load_tile_file

# Compiles the example GEMM (wgmma, 3 stages) and the .tile vadd; prints their
# PTX and IR snapshots as JSON.
CHILD = r"""
import json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "examples"))
import gemm
from tlc.compiler import compile_module
from tlc.frontend.tile_file import load_tile_file

def compiled(prim):
    c = compile_module(prim.build_module(), "sm_90a", keep_ir=True)
    return {"ptx": c.ptx, "stages": c.stages}

prims = [gemm.matmul.factory(256, 256, 256, 128, 128, 32, 128, 3),
         load_tile_file(os.path.join(sys.argv[1], "examples", "elementwise.tile"))["vadd"]]
print(json.dumps([[compiled(p) for p in prims] for _ in range(int(sys.argv[2]))]))
"""


def _run(repo, times: int) -> list:
    out = subprocess.run([sys.executable, "-c", CHILD, str(repo), str(times)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_same_ptx_and_ir_twice_in_a_process_and_in_a_fresh_one(repo):
    first, again = _run(repo, 2)
    (fresh,) = _run(repo, 1)
    assert first == again == fresh
    gemm, vadd = first
    assert ".entry gemm" in gemm["ptx"]["gemm"] and ".entry vadd" in vadd["ptx"]["vadd"]
    assert set(gemm["stages"]) == {"tile", "optimized", "gpu", "nvvm"}


def test_ir_snapshots_are_the_verified_text(repo):
    """compile_module keeps the IR as text without verifying it again (the pass
    manager just did): the text is what printing with verification gives."""
    prim = load_tile_file(str(repo / "examples" / "elementwise.tile"))["vadd"]
    kept = tlc.compiler.compile_module(prim.build_module(), "sm_90a", keep_ir=True).stages
    module = prim.build_module()
    target = pipeline.set_target(module, "sm_90a")
    assert kept["tile"] == str(module)
    for stage, text in [("optimized", pipeline.OPTIMIZE_PIPELINE),
                        ("gpu", pipeline.GPU_PIPELINE),
                        ("nvvm", pipeline.nvvm_pipeline(target))]:
        pipeline.run_pipeline(module, text, stage)
        if stage == "optimized":
            name_buffers(module)  # the snapshot names the buffers (for tlc.layout)
        assert kept[stage] == str(module), stage
