# Session 30's fifth GPU run: the TileLang-form MLA variants (tilelang_variants.py, built into
# .gpu/s30e), divided, checked against fp32 torch and timed.
# carry .gpu/lib .gpu/s30e; bash bench/results/2026-12-05/session30/gpu_run5.sh
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
timeout 200 python bench/results/2026-12-05/session30/tilelang_variants.py run .gpu/s30e 2>&1 | tee $OUT/tilelang_variants.txt
