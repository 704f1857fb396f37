# Session 33's fourth run: remote mbarrier arrivals at CTA scope (the compiler's multicast
# pipelines and T.mbarrier_arrive(..., cta_id=)): session 32's cluster checks (rank, the
# multicast ring) and the MLA variants (`_wsmc`: multicast pages; session 32's build_mla.py),
# with the clock probe of `_ws` and `_wsmc` at batch 132, context 8192.
# carry .gpu/lib CHECKS MLA
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
timeout 60 python test/gpu/run_artifacts.py $1 2>&1 | tee $OUT/checks.txt | tail -4
timeout 300 python bench/mla_gpu.py $2 2>&1 | tee $OUT/mla.txt | grep -v " ok$"
for v in ws wsmc; do
  timeout 40 python bench/results/2026-12-05/session32/clock_probe.py $2/mla_bench_b132_s8192_$v.tlcart 5 2>&1 | tee -a $OUT/clock.txt
done
