# Session 31's GPU runs: the builds in DIR (build.py, one suffix a variant), each kernel
# checked and timed in two rounds of one run.
# carry .gpu/lib DIR; bash bench/results/2026-12-05/session31/gpu_run.sh DIR
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
for round in 1 2; do
  echo "== round $round"
  timeout 270 python bench/mla_gpu.py $1 2>&1 | tee $OUT/mla_round$round.txt | grep -v " ok$"
done
