# Session 32's MLA run: build_mla.py's variants (_base, _ws, _wsmc), checked, then timed in
# two rounds beside the copy ceiling; the SM clock and power of _ws and _wsmc at batch 132.
# carry .gpu/lib DIR; bash bench/results/2026-12-05/session32/gpu_run_mla.sh DIR
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
HERE=bench/results/2026-12-05/session32
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
for round in 1 2; do
  echo "== round $round"
  timeout 200 python bench/mla_gpu.py $1 2>&1 | tee $OUT/mla_round$round.txt | grep -v " ok$"
done
for v in ws wsmc; do
  timeout 40 python $HERE/clock_probe.py $1/mla_bench_b132_s8192_$v.tlcart 5 2>&1 | tee -a $OUT/clock.txt
done
