# Session 31's MLA experiments, built for a GPU run (no GPU needed here): applies
# split_barriers_experiment.patch, rebuilds, compiles examples/mla_decode.py's bench shapes
# and checks in each variant (build.py), then restores the pass and rebuilds.
#   bash bench/results/2026-12-05/session31/prepare.sh
# Then, each a device call (carry .gpu/lib and the directory; ~250 s a round, two rounds):
#   bash bench/results/2026-12-05/session31/gpu_run.sh .gpu/s31a   # base, split, stag
#   bash bench/results/2026-12-05/session31/gpu_run.sh .gpu/s31b   # base, pub, areg
#   bash bench/results/2026-12-05/session31/gpu_run.sh .gpu/s31c   # base, all, stagareg
set -e
HERE=bench/results/2026-12-05/session31
export PATH=$PWD/.venv/bin:$PATH PYTHONPATH=$PWD
git apply $HERE/split_barriers_experiment.patch
trap 'git checkout passes/Transforms/DivideWarpgroupRoles.cpp && ninja -C build > /dev/null' EXIT
ninja -C build > /dev/null
rm -rf .gpu/s31a .gpu/s31b .gpu/s31c
S=TLC_EXPERIMENT_SPLIT_BARRIERS=1
for dir in a b c; do python $HERE/build.py .gpu/s31$dir _base; done
python $HERE/build.py .gpu/s31a _split $S
python $HERE/build.py .gpu/s31a _stag $S TLC_EXPERIMENT_STAGGER=1
python $HERE/build.py .gpu/s31b _pub $S TLC_EXPERIMENT_PUBLISH_FIRST=1
python $HERE/build.py .gpu/s31b _areg $S TLC_EXPERIMENT_A_REGS=1
python $HERE/build.py .gpu/s31c _all $S TLC_EXPERIMENT_STAGGER=1 TLC_EXPERIMENT_PUBLISH_FIRST=1 TLC_EXPERIMENT_A_REGS=1
python $HERE/build.py .gpu/s31c _stagareg $S TLC_EXPERIMENT_STAGGER=1 TLC_EXPERIMENT_A_REGS=1
mkdir -p .gpu/lib
cp build/python_packages/tlc/runtime/libtlc_runtime.so .gpu/lib/
