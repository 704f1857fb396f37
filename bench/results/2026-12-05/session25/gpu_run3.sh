export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python test/gpu/run_artifacts.py .gpu/atomics > $OUT/atomics.txt 2>&1; echo atomics rc=$?; cat $OUT/atomics.txt
python .gpu/parts_time.py > $OUT/parts.txt 2>&1; echo parts rc=$?; cat $OUT/parts.txt
python bench/attention_backward_gpu.py .gpu/fabv > $OUT/fabv.txt 2>&1; echo fabv rc=$?; cat $OUT/fabv.txt
