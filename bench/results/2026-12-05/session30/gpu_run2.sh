# Session 30's second and third GPU runs: two builds of mla_decode.py, each kernel checked and
# timed in two rounds of one run. DIR: .gpu/s30b (build2.py: with and without the pass's
# `stagger` option) or .gpu/s30c (build3.py: with and without P published before the rescale).
# carry .gpu/lib DIR; bash bench/results/2026-12-05/session30/gpu_run2.sh DIR
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
for round in 1 2; do
  echo "== round $round"
  timeout 250 python bench/mla_gpu.py ${1:-.gpu/s30b} 2>&1 | tee $OUT/mla_round$round.txt | grep -v " ok$"
done
