# Session 24, device run 1: the correctness checks of sessions 22-23's lowering.
# Built here first: build_gemm_extras.py .gpu/extras, build_reduce.py .gpu/reduce,
# build_language_checks.py .gpu/lang, build_warp_specialize.py .gpu/ws,
# build_attention_backward.py + session22/build_tilelang_fa_bwd.py .gpu/fabwd,
# test/gpu/pointer_table_check.py build .gpu/ptr.
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > $OUT/gpu.txt
for d in extras reduce lang ws/checks; do
  echo "== $d" >> $OUT/checks.txt
  python test/gpu/run_artifacts.py .gpu/$d >> $OUT/checks.txt 2>&1; echo "$d rc=$?"
done
grep -c PASS $OUT/checks.txt; grep -v "^PASS" $OUT/checks.txt | head -40
python test/gpu/pointer_table_check.py run .gpu/ptr > $OUT/ptr.txt 2>&1; echo "ptr rc=$?"; cat $OUT/ptr.txt
python bench/attention_backward_gpu.py .gpu/fabwd > $OUT/fabwd.txt 2>&1; echo "fabwd rc=$?"; tail -40 $OUT/fabwd.txt
