# Session 30's third GPU run: mla_decode.py divided, with and without P published before the rescale
# (build3.py, into .gpu/s30c), checked and timed in the same run.
# carry .gpu/lib .gpu/s30c; bash bench/results/2026-12-05/session30/gpu_run3.sh
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
for round in 1 2; do
  echo "== round $round"
  timeout 250 python bench/mla_gpu.py .gpu/s30c 2>&1 | tee $OUT/mla_round$round.txt | grep -v " ok$"
done
