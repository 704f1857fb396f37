# Session 27's last GPU checks (built here; the device did not come back in
# this session after run 6): fp8 conversions on both targets
# (bench/build_fp8_conversions.py .gpu/re/fp8c), the language checks with
# own-element stores and padded loops (bench/build_language_checks.py
# .gpu/re/lang), the hand double-buffered operand spelled both ways
# (.gpu/re/stage), and the families with the final compiler.
#   carry .gpu; bash bench/results/2026-12-05/session27/gpu_run7.sh
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
for d in re/fp8c re/lang re/stage; do
  f=$OUT/$(echo $d | tr / _)7.txt
  python test/gpu/run_artifacts.py .gpu/$d > $f 2>&1
  echo "$d rc=$?"; grep -c ^PASS $f; grep -v ^PASS $f | head -8
done
timeout 400 python test/gpu/families_check.py run .gpu/families > $OUT/families7.txt 2>&1
echo "families rc=$?"; grep -c ^PASS $OUT/families7.txt; grep -v ^PASS $OUT/families7.txt | head -20
