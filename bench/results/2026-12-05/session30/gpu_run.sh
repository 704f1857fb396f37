# Session 30's GPU run: examples/mla_decode.py divided by tile-divide-warpgroup-roles, checked
# and timed beside the same program undivided and examples/mla_decode_ws.py, then
# compute-sanitizer on two small checks of the divided program.
# Built here: python bench/results/2026-12-05/session30/build.py .gpu/s30
#             cp build/python_packages/tlc/runtime/libtlc_runtime.so .gpu/lib/
# carry .gpu/lib .gpu/s30; bash bench/results/2026-12-05/session30/gpu_run.sh
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
echo "== mla (checks, then timing)"
timeout 330 python bench/mla_gpu.py .gpu/s30/mla 2>&1 | tee $OUT/mla.txt | grep -v " ok$"
grep -c " ok$" $OUT/mla.txt
for tool in racecheck synccheck memcheck; do
  echo "== compute-sanitizer $tool"
  timeout 80 compute-sanitizer --tool $tool python bench/mla_gpu.py .gpu/s30/san 2>&1 | tail -4
done 2>&1 | tee $OUT/sanitizer.txt
