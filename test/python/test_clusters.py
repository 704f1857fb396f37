"""Thread-block clusters (sm_90a): T.Kernel's cluster_dims, T.block_rank_in_cluster,
T.cluster_arrive / T.cluster_wait / T.cluster_sync, T.tma_copy's cluster_mask
(a multicast the mask's lowest block issues) and T.mbarrier_arrive's cta_id (an
arrival at another block's barrier). Compiled and assembled here, the mistakes
reported at the user's line, the launcher's check of the grid; on a GPU, the
programs against torch."""

import re
from pathlib import Path

import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at
import ptxas

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def ranks(blocks=8, cluster=2):
    """R[b] = block b's rank in its cluster of `cluster` blocks along x."""

    @T.prim_func
    def main(R: T.Tensor((blocks,), "int32")):
        with T.Kernel(blocks, threads=128, cluster_dims=cluster) as bx:
            rank = T.block_rank_in_cluster()
            T.cluster_sync()
            if T.get_thread_binding() == 0:
                R[bx] = rank

    return main


def shared_tiles(steps, rows=64, cols=64):
    """Y[b, r] = (r + 1) * the sum of X[b]'s `steps` row blocks, on the two
    blocks (rank r) of the cluster of b: the pair's producer loads each block
    once, multicast into both (the mask's lowest block issues it), through a
    ring of two stages whose `empty` barriers count both blocks' consumers (an
    arrival here and one at the other block's)."""

    @T.prim_func
    def main(X: T.Tensor((2, steps * rows, cols), "float16"),
             Y: T.Tensor((2, 2, rows, cols), "float32")):
        with T.Kernel(2, 2, threads=256, cluster_dims=(2, 1, 1)) as (bx, by):
            tiles = T.alloc_shared((2, rows, cols), "float16")
            acc = T.alloc_fragment((rows, cols), "float32")
            full = T.alloc_barrier([128, 128])  # the producer's threads
            empty = T.alloc_barrier([256, 256])  # 128 consumers of each block
            rank = T.block_rank_in_cluster()
            with T.ws(1):
                for k in T.serial(steps):
                    st = k % 2
                    T.barrier_wait(empty[st], (k // 2 + 1) % 2)
                    T.tma_copy(X[by, k * rows:(k + 1) * rows, :], tiles[st, :, :],
                               barrier=full[st], cluster_mask=0b11)
                    T.barrier_arrive(full[st])
            with T.ws(0):
                T.clear(acc)
                for k in T.serial(steps):
                    st = k % 2
                    T.barrier_wait(full[st], (k // 2) % 2)
                    for r, c in T.Parallel(rows, cols):
                        acc[r, c] += tiles[st, r, c]
                    T.mbarrier_arrive(empty[st])
                    T.mbarrier_arrive(empty[st], cta_id=1 - rank)
                for r, c in T.Parallel(rows, cols):
                    Y[by, rank, r, c] = acc[r, c] * (rank + 1)

    return main


def clustered_gemm(M, N, K, bm=128, bn=128, bk=64, stages=4, threads=256, cluster=(2, 1, 1)):
    """C = A @ B in TileLang's plain pipelined form, launched in clusters along
    x: the blocks of a cluster share their A tiles (A's tile depends on by and
    k only), which the compiler multicasts."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads,
                      cluster_dims=cluster) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_f = T.alloc_fragment((bm, bn), "float")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * bm, bx * bn])

    return main


def test_pipelined_gemm_multicasts_the_shared_operand(tmp_path):
    ptx = tlc.compile(clustered_gemm(1024, 1024, 1024), target="sm_90a").get_kernel_source()
    loads = [line for line in ptx.splitlines() if "cp.async.bulk.tensor" in line]
    multicast = [line for line in loads if ".multicast::cluster" in line]
    # A's tile (one box), not B's (two 128-byte column blocks), in each of the
    # producer loop's two unrolled iterations.
    assert len(loads) == 6 and len(multicast) == 2, loads
    # Each consumer warp releases the stage at both blocks of the cluster, whose
    # empty barriers count both blocks' 8 warps.
    assert ptx.count("mbarrier.arrive.shared::cluster.b64") == 2
    ptxas.assemble(ptx, "sm_90a", tmp_path)
    # Along y the blocks share B instead; with clusters along both, nothing.
    ptx = tlc.compile(clustered_gemm(1024, 1024, 1024, cluster=(1, 2, 1)),
                      target="sm_90a").get_kernel_source()
    assert sum(".multicast::cluster" in line for line in ptx.splitlines()) == 4  # B's
    ptx = tlc.compile(clustered_gemm(1024, 1024, 1024, cluster=(2, 2, 1)),
                      target="sm_90a").get_kernel_source()
    assert ".multicast::cluster" not in ptx


def test_tile_picked_through_a_local_is_not_multicast():
    # A's rows come from a T.alloc_var assigned from bx: a different tile in
    # each block of the cluster, so nothing is multicast.
    @T.prim_func
    def main(A: T.Tensor((1024, 1024), "float16"), B: T.Tensor((1024, 1024), "float16"),
             C: T.Tensor((1024, 1024), "float16")):
        with T.Kernel(8, 8, threads=256, cluster_dims=(2, 1, 1)) as (bx, by):
            row = T.alloc_var("int32")
            row = (by + bx) % 8 * 128
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            C_f = T.alloc_fragment((128, 128), "float")
            T.clear(C_f)
            for k in T.Pipelined(16, num_stages=4):
                T.copy(A[row, k * 64], A_s)
                T.copy(B[k * 64, bx * 128], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * 128, bx * 128])

    ptx = tlc.compile(main, target="sm_90a").get_kernel_source()
    assert "cp.async.bulk.tensor" in ptx and ".multicast::cluster" not in ptx


def test_cluster_launch_in_ptx(tmp_path):
    kernel = tlc.compile(ranks(), target="sm_90a")
    ptx = kernel.get_kernel_source()
    assert ".reqnctapercluster 2, 1, 1" in ptx, ptx
    assert "%cluster_ctarank" in ptx
    # T.cluster_sync, then the kernel's end: no block leaves before its cluster.
    assert ptx.count("barrier.cluster.arrive.aligned") == 2
    assert ptx.count("barrier.cluster.wait.aligned") == 2
    assert kernel.artifact["cluster_dims"] == [2, 1, 1]
    ptxas.assemble(ptx, "sm_90a", tmp_path)


def test_split_cluster_barrier_in_ptx(tmp_path):
    @T.prim_func
    def split(R: T.Tensor((4,), "int32")):
        with T.Kernel(4, threads=128, cluster_dims=4) as bx:
            T.cluster_arrive_relaxed()
            T.cluster_wait()
            T.cluster_arrive()
            if T.get_thread_binding() == 0:
                R[bx] = T.block_rank_in_cluster()
            T.cluster_wait()

    ptx = tlc.compile(split, target="sm_90a").get_kernel_source()
    assert ".reqnctapercluster 4, 1, 1" in ptx
    body = ptx[ptx.index("barrier.cluster"):]
    assert re.findall(r"barrier\.cluster\.\w+(?:\.\w+)*", body) == [
        "barrier.cluster.arrive.relaxed.aligned", "barrier.cluster.wait.aligned",
        "barrier.cluster.arrive.aligned", "barrier.cluster.wait.aligned",
        "barrier.cluster.arrive.aligned", "barrier.cluster.wait.aligned"]  # the kernel's end
    ptxas.assemble(ptx, "sm_90a", tmp_path)


def test_multicast_and_remote_arrivals_in_ptx(tmp_path):
    ptx = tlc.compile(shared_tiles(4), target="sm_90a").get_kernel_source()
    assert ".reqnctapercluster 2, 1, 1" in ptx
    loads = [line for line in ptx.splitlines() if "cp.async.bulk.tensor" in line]
    assert loads and all(".multicast::cluster" in line for line in loads), loads
    assert "mapa.shared::cluster" in ptx
    assert "mbarrier.arrive.shared::cluster.b64" in ptx
    # The barriers are initialised before any block of the cluster reaches them.
    init = ptx.index("mbarrier.init")
    assert "barrier.cluster.wait" in ptx[init:ptx.index("cp.async.bulk.tensor")]
    ptxas.assemble(ptx, "sm_90a", tmp_path)


def test_launcher_refuses_a_grid_of_partial_clusters():
    @T.prim_func
    def dynamic(X: T.Tensor((T.dynamic("n"),), "float32")):
        with T.Kernel(T.ceildiv(X.shape[0], 128), threads=128, cluster_dims=2) as bx:
            if T.get_thread_binding() == 0:
                X[bx * 128] = 1.0

    kernel = tlc.compile(dynamic, target="sm_90a")
    assert kernel.artifact["cluster_dims"] == [2, 1, 1]
    from tlc.runtime import artifact

    launch = artifact.Kernel(kernel.artifact)
    bound = type("Bound", (), {"symbols": {"n": 3 * 128}})()
    with pytest.raises(tlc.runtime.ArgumentError, match="not whole clusters of 2"):
        launch._grid(bound)
    bound.symbols = {"n": 4 * 128}
    assert launch._grid(bound) == (4, 1, 1)


def bad_cluster_dims_size(X: T.Tensor((16,), "float32")):
    with T.Kernel(16, threads=128, cluster_dims=16):  # E:size
        X[0] = 1.0


def bad_cluster_partial(X: T.Tensor((16,), "float32")):
    with T.Kernel(6, threads=128, cluster_dims=4):  # E:partial
        X[0] = 1.0


def bad_cluster_axis(X: T.Tensor((16,), "float32")):
    with T.Kernel(8, threads=128, cluster_dims=(1, 2)):  # E:axis
        X[0] = 1.0


def bad_sync_without_clusters(X: T.Tensor((16,), "float32")):
    with T.Kernel(8, threads=128):
        T.cluster_sync()  # E:nocluster
        X[0] = 1.0


def bad_rank_without_clusters(X: T.Tensor((16,), "float32")):
    with T.Kernel(8, threads=128):
        X[0] = T.block_rank_in_cluster()  # E:norank


def bad_sync_in_branch(X: T.Tensor((16,), "float32")):
    with T.Kernel(8, threads=128, cluster_dims=2):
        if T.get_thread_binding() == 0:
            T.cluster_sync()  # E:branch


def bad_mask_without_clusters(X: T.Tensor((64, 64), "float16")):
    with T.Kernel(2, threads=256):
        s = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(1)
        with T.ws(1):
            T.tma_copy(X[0:64, :], s, barrier=full, cluster_mask=3)  # E:nomask
            T.barrier_arrive(full)


def bad_mask_range(X: T.Tensor((64, 64), "float16")):
    with T.Kernel(2, threads=256, cluster_dims=2):
        s = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(1)
        with T.ws(1):
            T.tma_copy(X[0:64, :], s, barrier=full, cluster_mask=4)  # E:maskrange
            T.barrier_arrive(full)


def bad_cta_range(X: T.Tensor((16,), "float32")):
    with T.Kernel(2, threads=128, cluster_dims=2):
        bar = T.alloc_barrier(256)
        T.mbarrier_arrive(bar, cta_id=2)  # E:cta


def bad_cta_without_clusters(X: T.Tensor((16,), "float32")):
    with T.Kernel(2, threads=128):
        bar = T.alloc_barrier(128)
        T.mbarrier_arrive(bar, cta_id=0)  # E:ctanocluster


@pytest.mark.parametrize("fn, marker, at, message", [
    (bad_cluster_dims_size, "size", "16):", "more than the 8 blocks a cluster may have"),
    (bad_cluster_partial, "partial", "4", "the grid's 6 blocks along x are not whole clusters "
                                          "of 4"),
    (bad_cluster_axis, "axis", "(1, 2)", "the grid has 1 dimension(s)"),
    (bad_sync_without_clusters, "nocluster", "T.cluster_sync",
     "needs a kernel launched in clusters"),
    (bad_rank_without_clusters, "norank", "T.block_rank_in_cluster",
     "needs a kernel launched in clusters"),
    (bad_sync_in_branch, "branch", "T.cluster_sync", "every thread of the cluster's blocks"),
    (bad_mask_without_clusters, "nomask", "3", "needs a kernel launched in clusters"),
    (bad_mask_range, "maskrange", "4)", "bit mask of this cluster's 2 blocks (1 to 3), got 4"),
    (bad_cta_range, "cta", "2", "cta_id 2 is not a block of this cluster of 2"),
    (bad_cta_without_clusters, "ctanocluster", "0", "needs a kernel launched in clusters"),
])
def test_cluster_mistakes_name_the_line(fn, marker, at, message):
    with pytest.raises(tlc.errors.CompilationError) as e:
        tlc.compile(T.prim_func(fn), target="sm_90a")
    assert_error_at(e.value, THIS, LINES, marker, at, message)


def test_grid_sync_in_clusters_is_an_error():
    @T.prim_func
    def synced(X: T.Tensor((8,), "float32")):
        with T.Kernel(8, threads=128, cluster_dims=2) as bx:
            if T.get_thread_binding() == 0:
                X[bx] = 1.0
            T.sync_grid()

    with pytest.raises(tlc.errors.CompilationError, match="T.sync_grid.*cluster_dims"):
        tlc.compile(synced, target="sm_90a")


def test_clusters_need_sm_90a():
    with pytest.raises(tlc.errors.CompilationError, match="need sm_90a; the target is sm_80"):
        tlc.compile(ranks(), target="sm_80")


def test_interpreter_refuses_clusters():
    import numpy as np

    from tlc.interpreter import InterpreterError

    with pytest.raises(InterpreterError, match="not a kernel launched in thread-block clusters"):
        tlc.interpret(ranks(), np.zeros(8, np.int32))


@pytest.mark.gpu
def test_gpu_ranks():
    import torch

    r = torch.full((8,), -1, dtype=torch.int32, device="cuda")
    tlc.compile(ranks())(r)
    assert r.tolist() == [0, 1] * 4


@pytest.mark.gpu
@pytest.mark.parametrize("cluster", [(2, 1, 1), (1, 2, 1)])
def test_gpu_clustered_gemm(cluster):
    import torch

    a = torch.randn(512, 1024, dtype=torch.float16, device="cuda")
    b = torch.randn(1024, 512, dtype=torch.float16, device="cuda")
    c = torch.full((512, 512), float("nan"), dtype=torch.float16, device="cuda")
    tlc.compile(clustered_gemm(512, 512, 1024, cluster=cluster))(a, b, c)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-1)


@pytest.mark.gpu
def test_gpu_shared_tiles():
    import torch

    x = torch.randn(2, 4 * 64, 64, dtype=torch.float16, device="cuda")
    y = torch.full((2, 2, 64, 64), float("nan"), device="cuda")
    tlc.compile(shared_tiles(4))(x, y)
    total = x.float().view(2, 4, 64, 64).sum(1)
    torch.testing.assert_close(y, torch.stack([total, 2 * total], 1), rtol=1e-5, atol=1e-4)
