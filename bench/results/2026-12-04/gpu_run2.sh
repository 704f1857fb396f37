export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD
python test/gpu/run_artifacts.py .gpu/extras > $OUT/extras.txt 2>&1; grep -c PASS $OUT/extras.txt; grep -v PASS $OUT/extras.txt | tail -5
python bench/gemm_gpu.py .gpu/sched 3 > $OUT/sched.txt 2>&1; tail -8 $OUT/sched.txt
python bench/rmsnorm_gpu.py .gpu/rms 3 > $OUT/rms.txt 2>&1; grep -v PASS $OUT/rms.txt | tail -22
