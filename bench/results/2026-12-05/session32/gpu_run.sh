# Session 32's GPU run: build.py's checks and stream-K GEMM, build_attention.py's schedules.
# carry .gpu/lib .gpu/s32; bash bench/results/2026-12-05/session32/gpu_run.sh .gpu/s32
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
python test/gpu/run_artifacts.py $1/checks 2>&1 | tee $OUT/checks.txt
timeout 150 python bench/gemm_gpu.py $1/streamk/streamk_nn 5 2>&1 | tee $OUT/streamk.txt
timeout 300 python bench/attention_gpu.py $1/attn 3 2>&1 | tee $OUT/attention.txt
