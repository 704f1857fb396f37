# Session 33's run: its checks (build_checks.py) and block-sparse GEMMs (build_blocksparse.py,
# tests/gpu/families_check.py), session 32's clustered GEMM (compiler-derived multicast) checks
# and timings, then its MLA variants (../../2026-12-05/session32/build_*.py).
# carry .gpu/lib CHECKS BS FAM GEMM MLA
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
HERE=bench/results/2026-12-06/session33
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
timeout 40 python test/gpu/run_artifacts.py $1 2>&1 | tee $OUT/checks.txt
timeout 100 python $HERE/blocksparse_gpu.py $2 2>&1 | tee $OUT/blocksparse.txt
timeout 60 python test/gpu/families_check.py run $3 blocksparse_gemm 2>&1 | tee $OUT/families.txt | tail -3
timeout 40 python test/gpu/run_artifacts.py $4/checks 2>&1 | tee $OUT/gemm_checks.txt
timeout 110 python bench/gemm_gpu.py $4/bench 1 2>&1 | tee $OUT/gemm.txt
timeout 220 python bench/mla_gpu.py $5 2>&1 | tee $OUT/mla_round1.txt | grep -v " ok$"
