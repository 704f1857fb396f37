# Session 26's GPU checks (built here, to run in a session with a device):
#   carry .gpu; bash bench/results/2026-12-05/session26/gpu_run4.sh
# .gpu/ holds session 25's run-3 artifacts (atomics, parts, fabv) and this
# session's: ws (bench/build_warp_specialize.py: the T.Pipelined-staged T.ws
# GEMM beside the hand-staged ones), lang (bench/build_language_checks.py:
# bodies of warps), views (bench/build_views.py: a gemm operand viewed as
# float32 scratch). Built with:
#   python bench/build_atomics.py .gpu/atomics
#   python bench/build_warp_specialize.py .gpu/ws
#   python bench/build_language_checks.py .gpu/lang   (bodies of warps, the guarded shifted half, per-thread cp.async copies)
#   python bench/build_views.py .gpu/views
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
for d in ws/checks lang views atomics; do
  python test/gpu/run_artifacts.py .gpu/$d > $OUT/$(echo $d | tr / _).txt 2>&1
  echo "$d rc=$?"; grep -c PASS $OUT/$(echo $d | tr / _).txt; grep -v PASS $OUT/$(echo $d | tr / _).txt | head -20
done
python bench/gemm_gpu.py .gpu/ws/nn_float16 > $OUT/ws_bench.txt 2>&1; echo "ws bench rc=$?"; tail -30 $OUT/ws_bench.txt
python .gpu/parts_time.py > $OUT/parts.txt 2>&1; echo parts rc=$?; cat $OUT/parts.txt
python bench/attention_backward_gpu.py .gpu/fabv > $OUT/fabv.txt 2>&1; echo fabv rc=$?; cat $OUT/fabv.txt
