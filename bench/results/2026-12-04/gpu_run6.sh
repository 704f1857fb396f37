export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD
python test/gpu/run_artifacts.py .gpu/ws/checks > $OUT/ws_checks.txt 2>&1; tail -1 $OUT/ws_checks.txt; grep FAIL $OUT/ws_checks.txt | head
python bench/gemm_gpu.py .gpu/dyn 3 > $OUT/dyn.txt 2>&1; tail -18 $OUT/dyn.txt
python bench/gemm_gpu.py .gpu/sk/streamk_nn 2 > $OUT/streamk_nn.txt 2>&1; grep -c WRONG $OUT/streamk_nn.txt; tail -40 $OUT/streamk_nn.txt
