"""Every example compiles to PTX (and, where a GPU is, runs and checks itself)."""

import os
import subprocess
import sys

import pytest

EXAMPLES = {
    "gemm_relu.py": "compiled to PTX: 4 wgmma, 5 TMA, 0 mma.sync, 0 cp.async",
    "softmax.py": "compiled row_softmax: 80 shuffles",
    "reducers.py": "compiled 4 reducer kernels:",
    "chained_gemm.py": "compiled chain: 0 mma.sync, 8 wgmma, 0 ldmatrix",
    "conv2d.py": "compiled conv2d: 4 wgmma, 0 mma.sync, 4 16-byte im2col loads, 4 TMA",
    "attention.py": "compiled attention: 16 wgmma, 4 TMA, 0 mma.sync",
    "attention_backward.py": "out, dQ, dK, dV match the float64 reference",
    "attention_varlen.py": "compiled varlen attention: 16 wgmma, 4 TMA, 2 setmaxnreg, "
                           "0 mma.sync",
    "gemm.py": "compiled gemm:",
    "gemm_autotune.py": "compiled 6 candidates for 2048x2048x2048",
    "rmsnorm_silu.py": "compiled rmsnorm_silu for 16384 x 4096",
    "split_k_gemm_global.py": "compiled splitk_gemm: kernels splitk_gemm_k0, splitk_gemm_k1; "
                              "scratch [('partial', [4, 256, 256])]",
    "flash_decoding_split.py": "compiled decode: kernels decode_k0, decode_k1",
    "warp_specialize.py": "compiled 5 programs to PTX: producer_consumer",
    "pipeline_schedule.py": "interpreter: 200 x 160 x 96 matches numpy",
    "lightning_indexer.py": "compiled lightning indexer: 2 wgmma, 1 TMA",
}


@pytest.mark.parametrize("example,expected", sorted(EXAMPLES.items()))
def test_example_compiles(repo, tmp_path, example, expected):
    r = subprocess.run([sys.executable, str(repo / "examples" / example)], capture_output=True,
                       text=True, env=dict(os.environ, TLC_CACHE_DIR=str(tmp_path / "cache")))
    assert r.returncode == 0, r.stderr
    assert expected in r.stdout
    assert "no GPU here: not run" in r.stdout or "matches" in r.stdout or example == "gemm.py"


def test_attention_causal_gqa_bhsd_compiles(repo, tmp_path):
    r = subprocess.run([sys.executable, str(repo / "examples/attention.py"), "--causal", "--gqa",
                        "--bhsd"], capture_output=True, text=True,
                       env=dict(os.environ, TLC_CACHE_DIR=str(tmp_path / "cache")))
    assert r.returncode == 0, r.stderr
    assert "compiled attention: 16 wgmma, 4 TMA, 0 mma.sync" in r.stdout


def test_attention_backward_causal_head_dim_128(repo, tmp_path):
    r = subprocess.run([sys.executable, str(repo / "examples/attention_backward.py"), "--causal",
                        "--dim", "128"], capture_output=True, text=True,
                       env=dict(os.environ, TLC_CACHE_DIR=str(tmp_path / "cache")))
    assert r.returncode == 0, r.stderr
    assert "compiled attention_forward, attention_delta, attention_backward, attention_dq" \
        in r.stdout
    assert "out, dQ, dK, dV match the float64 reference" in r.stdout
