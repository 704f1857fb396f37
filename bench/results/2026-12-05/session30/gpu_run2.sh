# Session 30's second GPU run: mla_decode.py divided, with and without the pass's `stagger`
# option, checked and timed in the same run (built by build2.py into .gpu/s30b).
# carry .gpu/lib .gpu/s30b; bash bench/results/2026-12-05/session30/gpu_run2.sh
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
for round in 1 2; do
  echo "== round $round"
  timeout 250 python bench/mla_gpu.py .gpu/s30b 2>&1 | tee $OUT/mla_round$round.txt | grep -v " ok$"
done
