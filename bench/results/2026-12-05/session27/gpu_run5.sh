# Session 27's GPU run: the family programs (examples/families/, kernels built
# here by `python test/gpu/families_check.py build .gpu/families`) against
# torch, and the checked artifacts of bench/build_{gemm,attention,reduce,
# language_checks,gemm_ws,warp_specialize,elementwise,mla}.py rebuilt with
# this session's compiler (padded T.Parallel layouts, per-loop staging,
# drained cp.async pipelines) under .gpu/re/.
#   carry .gpu; bash bench/results/2026-12-05/session27/gpu_run5.sh
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 330 python test/gpu/families_check.py run .gpu/families > $OUT/families.txt 2>&1
echo "families rc=$?"; grep -c ^PASS $OUT/families.txt; grep -v ^PASS $OUT/families.txt | head -60
for d in re/gemm re/attention re/reduce re/lang re/gemm_ws/checks re/ws/checks re/elementwise re/mla; do
  f=$OUT/$(echo $d | tr / _).txt
  timeout 60 python test/gpu/run_artifacts.py .gpu/$d > $f 2>&1
  echo "$d rc=$?"; grep -c ^PASS $f; grep -v ^PASS $f | head -8
done
