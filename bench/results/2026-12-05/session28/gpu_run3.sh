# Session 28's third GPU run: issue 9's GEMM figures in one run, examples/gemm.py
# unchanged (fp16 and bf16, NN and NT, 4096^3 and 8192^3; 128x256x64 and
# 256x128x64 blocks, 3 stages, panel 8), beside cuBLAS and the tutorial Triton
# matmul, 3 interleaved rounds; and K-heavy shapes on three block shapes. Built
# here by build_g9.py (next to this script) into .gpu/g9; not run in session
# 28 (the device lent no more time), left for the next GPU session.
#   python bench/results/2026-12-05/session28/build_g9.py .gpu/g9
#   carry .gpu; bash bench/results/2026-12-05/session28/gpu_run3.sh
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for d in nn_float16 nt_float16 nn_bfloat16 nt_bfloat16; do
  flag=""; [ "${d:0:2}" = nt ] && flag=--nt
  echo "== $d"
  timeout 130 python bench/gemm_gpu.py .gpu/g9/$d 3 $flag 2>&1 | tee $OUT/gemm_$d.txt
done
# K-heavy shapes (stream-K), 128x128 tiles (the configs measured before) beside
# 128x256 and 256x128 (a quarter less operand traffic per SM; 256x128 on
# 256 x 1024 x 32768 is a single row of 8 tiles, stream-K since this session), fp16 NN.
echo "== kheavy"
timeout 130 python bench/gemm_gpu.py .gpu/g9/kheavy 3 2>&1 | tee $OUT/gemm_kheavy.txt
