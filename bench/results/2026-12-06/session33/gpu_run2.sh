# Session 33's second run: checks (build_checks.py), the block-sparse GEMMs again with the
# counted conditional pipeline (`after2`, beside `before` / `after` of the first run), the
# family's checks, the clustered-GEMM isolation (build_cluster_isolate.py), and on an H200
# only, the MLA variants (issue 10's bar is on the H200).
# carry .gpu/lib CHECKS BS FAM ISOLATE MLA
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
HERE=bench/results/2026-12-06/session33
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
timeout 40 python test/gpu/run_artifacts.py $1 2>&1 | tee $OUT/checks.txt
timeout 100 python $HERE/blocksparse_gpu.py $2 2>&1 | tee $OUT/blocksparse.txt
timeout 120 python test/gpu/families_check.py run $3 2>&1 | tee $OUT/families.txt | tail -3
timeout 100 python bench/gemm_gpu.py $4 2 2>&1 | tee $OUT/gemm_isolate.txt
if grep -q H200 $OUT/device.txt; then
  timeout 200 python bench/mla_gpu.py $5 2>&1 | tee $OUT/mla_round1.txt | grep -v " ok$"
fi
