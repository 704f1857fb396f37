# Session 32's clustered GEMM run: build_cluster_gemm.py's checks, then its kernels timed
# beside cuBLAS and Triton (3 rounds). carry .gpu/lib DIR
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
timeout 60 python test/gpu/run_artifacts.py $1/checks 2>&1 | tee $OUT/checks.txt
timeout 300 python bench/gemm_gpu.py $1/bench 3 2>&1 | tee $OUT/gemm.txt
