# Session 24, device run 2. Built here first: the int8 gemms with operands stored
# M-/N-major (bench/build_gemm_extras.py's gemm_int8_{NN,TN,TT}_*, in .gpu/int8nt), test/gpu/strided_check.py build .gpu/strided,
# test/gpu/sync_grid_check.py build .gpu/syncgrid, bench/build_gemm_int8.py .gpu/int8,
# the attention-backward variants (.gpu/fabvar: grid order, dS in registers, 32-query
# blocks), and TileLang's example_mla_decode_persistent.py compiled by tlc (.gpu/mla_persist,
# its check script .gpu/mla_persist_run.py; scratch copies, not in the repository).
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python test/gpu/run_artifacts.py .gpu/int8nt > $OUT/int8_layouts.txt 2>&1; echo int8nt rc=$?; cat $OUT/int8_layouts.txt
python test/gpu/strided_check.py run .gpu/strided > $OUT/strided.txt 2>&1; echo strided rc=$?; cat $OUT/strided.txt
python bench/gemm_int8_gpu.py .gpu/int8 3 > $OUT/int8.txt 2>&1; echo int8 rc=$?; cat $OUT/int8.txt
python bench/attention_backward_gpu.py .gpu/fabvar > $OUT/fabvar.txt 2>&1; echo rc=$?; cat $OUT/fabvar.txt
timeout 120 python test/gpu/sync_grid_check.py run .gpu/syncgrid > $OUT/syncgrid.txt 2>&1; echo syncgrid rc=$?; cat $OUT/syncgrid.txt
timeout 120 python .gpu/mla_persist_run.py > $OUT/mla_persist.txt 2>&1; echo mla rc=$?; cat $OUT/mla_persist.txt
