"""TMA tensor maps in the runtime (tlc/runtime/tensor_maps.py): the artifact's
"tensor_maps", the argument checks, the encoding through
cuTensorMapEncodeTiled and the 128-byte parameters reaching cuLaunchKernel,
against the fake libcuda.so.1 of test_runtime.py. No GPU needed."""

import struct
import textwrap

import pytest
from test_runtime import FAKE_TORCH, CudaArray, _have_cuda_torch, run_fake, vadd_dict

import tlc.runtime as rt
from tlc.runtime import ArgumentError, ArtifactError, Kernel, LaunchError
from tlc.runtime import tensor_maps as tm

A_PTR, C_PTR = 0x10000, 0x80000


def tma_dict(maps=None, **overrides):
    """A kernel reading A (M x K float16) and writing C (2 x M x K float16)
    through TMA; the PTX is a placeholder (the fake driver does not read it)."""
    d = vadd_dict(
        name="tcopy", grid=["ceildiv(K, 64)", "ceildiv(M, 64)"],
        params=[
            {"name": "A", "kind": "tensor", "dtype": "float16", "shape": ["M", "K"],
             "access": "read"},
            {"name": "C", "kind": "tensor", "dtype": "float16", "shape": [2, "M", "K"],
             "access": "write"},
            {"name": "alpha", "kind": "scalar", "dtype": "float32"},
        ],
        tensor_maps=maps if maps is not None else [
            {"param": "A", "box": [64, 64], "swizzle": 128, "fill": "zero"},
            {"param": "C", "box": [1, 32, 64], "swizzle": 128}])
    d.update(overrides)
    return d


def tma_args(m=100, k=1000, a_ptr=A_PTR, c_ptr=C_PTR):
    return (CudaArray((m, k), "<f2", ptr=a_ptr), CudaArray((2, m, k), "<f2", ptr=c_ptr), 0.5)


# Parameter sizes of tcopy for the fake driver's log: A and C's descriptors
# (7 and 9 slots), alpha, then the two maps.
SIZES = [8] * 16 + [4, 128, 128]


# ---- The artifact ---------------------------------------------------------------


def test_tensor_maps_are_parsed():
    k = Kernel.from_dict(tma_dict())
    a, c = k.tensor_maps
    assert (a.index, a.param.name, a.box, a.swizzle, a.data_type) == (0, "A", (64, 64), 128, 6)
    assert (c.index, c.param.name, c.box) == (1, "C", (1, 32, 64))
    assert k.to_dict()["tensor_maps"] == tma_dict()["tensor_maps"]
    assert Kernel.from_dict(vadd_dict()).tensor_maps == ()
    assert Kernel.from_dict(tma_dict(maps=[])).tensor_maps == ()


@pytest.mark.parametrize("dtype, data_type", [
    ("uint8", 0), ("int8", 0), ("float8_e4m3fn", 0), ("float8_e5m2", 0), ("int16", 1),
    ("uint16", 1), ("float16", 6), ("bfloat16", 9), ("float32", 7), ("int32", 3),
    ("uint32", 2), ("int64", 5), ("float64", 8)])
def test_tensor_map_data_types(dtype, data_type):
    params = [{"name": "X", "kind": "tensor", "dtype": dtype, "shape": [8, 256],
               "access": "read"}]
    k = Kernel.from_dict(vadd_dict(grid=[1], params=params, tensor_maps=[
        {"param": "X", "box": [8, 128 // rt.DTYPES[dtype].itemsize], "swizzle": 128}]))
    assert k.tensor_maps[0].data_type == data_type


def _map(**fields):
    return dict({"param": "A", "box": [64, 64], "swizzle": 128, "fill": "zero"}, **fields)


@pytest.mark.parametrize("maps, message", [
    ({"param": "A"}, "'tensor_maps' must be a list"),
    (["A"], "tensor map 0: must be an object"),
    ([_map(), _map(param="B")], "tensor map 1: 'param' must name a parameter of the kernel, "
                                "got 'B'"),
    ([_map(param="alpha")], "tensor map 0 (param 'alpha'): 'param' must be a tensor parameter"),
    ([_map(swizzle=16)], "tensor map 0 (param 'A'): 'swizzle' must be one of (0, 32, 64, 128)"),
    ([_map(swizzle=True)], "'swizzle' must be one of"),
    ([_map(box=[512, 64])], "tensor map 0 (param 'A'): 'box' sizes must be 1 to 256, "
                            "got [512, 64]"),
    ([_map(box=[0, 64])], "'box' sizes must be 1 to 256"),
    ([_map(box=[64])], "tensor map 0 (param 'A'): 'box' [64] has 1 sizes, but 'A' has rank 2"),
    ([_map(box="64x64")], "'box' must be a list of ints"),
    ([_map(box=[64, 128])], "the innermost box row is 128 float16 = 256 bytes, more than "
                            "the 128-byte swizzle"),
    ([_map(box=[64, 4], swizzle=0)], "the innermost box row is 4 float16 = 8 bytes; TMA needs "
                                     "a multiple of 16 bytes"),
    ([_map(fill="nan")], "tensor map 0 (param 'A'): 'fill' must be one of ('zero',)"),
    ([_map(l2="256B")], "tensor map 0: unknown key(s) ['l2']"),
])
def test_malformed_tensor_maps(maps, message):
    with pytest.raises(ArtifactError, match="artifact 'tcopy': ") as e:
        Kernel.from_dict(tma_dict(maps=maps))
    assert message in str(e.value), str(e.value)


def test_tensor_map_rank_and_dtype_limits():
    def kernel(dtype, shape, box):
        params = [{"name": "X", "kind": "tensor", "dtype": dtype, "shape": shape,
                   "access": "read"}]
        return Kernel.from_dict(vadd_dict(grid=[1], params=params, tensor_maps=[
            {"param": "X", "box": box, "swizzle": 0}]))

    with pytest.raises(ArtifactError, match="TMA cannot copy bool elements"):
        kernel("bool", [16], [16])
    with pytest.raises(ArtifactError, match="TMA maps tensors of rank 1 to 5, 'X' has rank 6"):
        kernel("float32", [2] * 6, [2] * 5 + [4])
    with pytest.raises(ArtifactError, match="rank 1 to 5, 'X' has rank 0"):
        kernel("float32", [], [])
    assert kernel("float32", [2] * 5, [2] * 4 + [4]).tensor_maps[0].box == (2, 2, 2, 2, 4)


# ---- Argument checks (no driver needed) ---------------------------------------------


def test_tma_checks_need_no_driver():
    k = Kernel.from_dict(tma_dict())
    assert k.grid_for(*tma_args()) == (16, 2, 1)


def _tma_error(k, args, message):
    with pytest.raises(ArgumentError) as e:
        k.grid_for(*args)
    assert str(e.value) == message
    with pytest.raises(ArgumentError):  # a call fails alike, before the driver
        k(*args)


def test_misaligned_row_stride():
    k = Kernel.from_dict(tma_dict())
    _tma_error(k, tma_args(m=64, k=1001),
               "argument 'A' (param 1 of tcopy): TMA needs every row stride to be a "
               "multiple of 16 bytes; shape (64, 1001) float16 has a row stride of 2002 bytes")
    only_c = Kernel.from_dict(tma_dict(maps=[{"param": "C", "box": [1, 32, 64],
                                              "swizzle": 128}]))
    _tma_error(only_c, tma_args(m=64, k=1001),
               "argument 'C' (param 2 of tcopy): TMA needs every row stride to be a "
               "multiple of 16 bytes; shape (2, 64, 1001) float16 has a dim-1 stride of "
               "2002 bytes")
    # Without maps the same tensors are fine: the checks are TMA's only.
    assert Kernel.from_dict(tma_dict(maps=[])).grid_for(*tma_args(m=64, k=1001)) == (16, 1, 1)


def test_check_args_checks_the_maps_of_its_params():
    k = Kernel.from_dict(tma_dict())
    a, c, _ = tma_args(m=64, k=1001)
    rt.args.check_args(k.name, k.params[:1], (a,))  # without the maps: fine
    with pytest.raises(ArgumentError, match="argument 'A' .* row stride of 2002 bytes"):
        rt.args.check_args(k.name, k.params[:1], (a,), k.tensor_maps)
    with pytest.raises(ArgumentError, match="argument 'C' .* dim-1 stride of 2002 bytes"):
        rt.args.check_args(k.name, k.params[1:2], (c,), k.tensor_maps)


def test_huge_tensors():
    k = Kernel.from_dict(tma_dict(maps=[_map()]))
    _tma_error(k, tma_args(m=1, k=1 << 32),
               "argument 'A' (param 1 of tcopy): TMA needs every size to be below 2^32; shape "
               "(1, 4294967296) has 4294967296 in dim 1")
    m = tm.TensorMap(0, rt.Param(1, "X", "tensor", "float32", ("a", "b", "c")), (1, 1, 4), 0, 7)
    with pytest.raises(ArgumentError, match="X: TMA needs every stride to be below 2\\^40 bytes; "
                       "shape \\(2, 1048576, 262144\\) float32 has a dim-0 stride of "
                       "1099511627776 bytes"):
        m.check_arg((2, 1 << 20, 1 << 18), "X")


def test_size_one_dims_take_any_stride():
    # A size-1 dim is never stepped over: its stride is rounded up for TMA.
    m = Kernel.from_dict(tma_dict()).tensor_maps[0]
    assert m.byte_strides((1, 1001)) == (2016, 2)
    assert m.byte_strides((3, 1000)) == (2000, 2)
    m.check_arg((1, 1001), "A")


def test_empty_mapped_tensor_with_a_nonempty_grid():
    k = Kernel.from_dict(tma_dict(grid=[1]))
    args = (CudaArray((0, 1000), "<f2", ptr=0), CudaArray((2, 0, 1000), "<f2", ptr=0), 0.5)
    assert k.grid_for(*args) == (1, 1, 1)  # bind accepts it...
    with pytest.raises(ArgumentError, match=r"argument 'A' \(param 1 of tcopy\): has shape "
                       r"\(0, 1000\), no element, but the kernel reads it with TMA"):
        k(*args)  # ...the launch refuses it, before looking for a driver
    # With an empty grid nothing is launched and nothing is refused.
    Kernel.from_dict(tma_dict())(*args)


# ---- The C library without a driver ------------------------------------------------------


def test_c_checks_before_the_driver(runtime_lib):
    lib = rt.driver.Runtime(runtime_lib)
    dims = rt.driver.launch_dims((1, 1, 1), (1, 1, 1), 0)
    with pytest.raises(LaunchError, match="2 tensor maps do not fit in 20 slots"):
        lib.launch_on(0, 1, dims, 0, bytes(8 * 20), b"k", n_maps=2)
    with pytest.raises(LaunchError, match="tensor map of argument 'A' of kernel 'k': the "
                       "innermost stride is 4 bytes, TMA needs it to be one element \\(2 bytes"):
        lib.encode_tensor_map(6, A_PTR, (4, 8), (32, 4), (4, 8), 0, "k", "A")
    with pytest.raises(LaunchError, match="swizzle 48 bytes, expected 0, 32, 64 or 128"):
        lib.encode_tensor_map(6, A_PTR, (4, 8), (16, 2), (4, 8), 48, "k", "A")
    with pytest.raises(LaunchError, match="rank 6 or data type 6 is not supported"):
        lib.encode_tensor_map(6, A_PTR, (1,) * 6, (2,) * 6, (1,) * 6, 0, "k", "A")


# ---- Against the fake driver ---------------------------------------------------------------


# Imported before FAKE_TORCH replaces torch (test_gpu_* asks torch at import).
_BEFORE_TORCH = "import test_tensor_maps as tm\n"


def _encodes(log):
    return [line for line in log if line.startswith("encode")]


def _launch_params(log, per_call=len(SIZES)):
    params = [line.split()[1:] for line in log if line.startswith("param ")]
    return [params[i:i + per_call] for i in range(0, len(params), per_call)]


def _map_bytes(address: int, innermost: int) -> str:
    """The fake driver's map for a tensor at `address`, as logged."""
    return (struct.pack("<QQ", address, innermost) + b"\x5a" * 112).hex()


def test_fake_driver_encodes_and_passes_maps(fake_driver, tmp_path):
    out, log = run_fake(fake_driver, tmp_path, """
        import test_tensor_maps as tm
        k = rt.Kernel.from_dict(tm.tma_dict())
        k(*tm.tma_args())
    """, sizes=SIZES)
    assert out == ""
    # Innermost first: dims, the byte strides of dims 1.., the box; swizzle
    # 128B is 3, L2 promotion 128B is 2, zero fill is 0.
    assert _encodes(log) == [
        f"encode type 6 rank 2 address {A_PTR:#x} aligned 1 dims 1000 100 strides 2000 "
        "box 64 64 elementstrides 1 1 interleave 0 swizzle 3 l2 2 oob 0",
        f"encode type 6 rank 3 address {C_PTR:#x} aligned 1 dims 1000 100 2 strides 2000 "
        "200000 box 64 32 1 elementstrides 1 1 1 interleave 0 swizzle 3 l2 2 oob 0"]
    assert [line for line in log if line.startswith("launch")] == [
        "launch 16 2 1 128 1 1 0 0 ctx 0x1000"]
    (call,) = _launch_params(log)
    regular = [struct.unpack("<Q", bytes.fromhex(v[0]))[0] for v in call[:16]]
    assert regular == [A_PTR, A_PTR, 0, 100, 1000, 1000, 1,
                       C_PTR, C_PTR, 0, 2, 100, 1000, 100000, 1000, 1]
    assert struct.unpack("<f", bytes.fromhex(call[16][0])) == (0.5,)
    # The maps come last, in the artifact's order, intact and 128-byte aligned.
    assert call[17] == [_map_bytes(A_PTR, 1000), "align128", "1"]
    assert call[18] == [_map_bytes(C_PTR, 1000), "align128", "1"]


@pytest.mark.parametrize("native", [True, False])
def test_fake_driver_tma_fast_path_caches_maps(fake_driver, tmp_path, native, launch_module):
    # The first torch call encodes and leaves a plan holding the maps; the
    # same pointers again encode nothing, a new pointer encodes the call's
    # maps, and pointers seen before are found again.
    out, log = run_fake(fake_driver, tmp_path, _BEFORE_TORCH + FAKE_TORCH + textwrap.dedent("""
        k = rt.Kernel.from_dict(tm.tma_dict())
        a = T((100, 1000), "float16", ptr=tm.A_PTR)
        c = T((2, 100, 1000), "float16", ptr=tm.C_PTR)
        a2 = T((100, 1000), "float16", ptr=0x20000)
        for args in [(a, c, 0.5), (a, c, 1.5), (a2, c, 0.5), (a, c, 0.5), (a2, c, 2.5)]:
            k(*args)
            print(len(k._plans), sum(len(p.encoded) for p in k._plans.values()))
        print("native", k._native_launcher and k._native_launcher.launched)
    """), sizes=SIZES, native=native)
    launched = "native 4" if native and launch_module else "native None"
    assert out.splitlines() == ["1 1", "1 1", "1 2", "1 2", "1 2", launched]
    addresses = [line.split()[6] for line in _encodes(log)]
    assert addresses == [hex(A_PTR), hex(C_PTR), "0x20000", hex(C_PTR)]
    calls = _launch_params(log)
    assert len(calls) == 5
    first_a = struct.unpack("<Q", bytes.fromhex(calls[0][0][0]))[0]
    assert first_a == A_PTR
    for call, a_ptr, alpha in zip(calls, [A_PTR, A_PTR, 0x20000, A_PTR, 0x20000],
                                  [0.5, 1.5, 0.5, 0.5, 2.5], strict=True):
        assert struct.unpack("<Q", bytes.fromhex(call[0][0]))[0] == a_ptr
        assert struct.unpack("<f", bytes.fromhex(call[16][0])) == (alpha,)
        assert call[17] == [_map_bytes(a_ptr, 1000), "align128", "1"]
        assert call[18] == [_map_bytes(C_PTR, 1000), "align128", "1"]


def test_fake_driver_tma_cache_is_bounded(fake_driver, tmp_path):
    out, log = run_fake(fake_driver, tmp_path, _BEFORE_TORCH + FAKE_TORCH + textwrap.dedent("""
        k = rt.Kernel.from_dict(tm.tma_dict(maps=[tm._map()]))
        c = T((2, 100, 1000), "float16", ptr=tm.C_PTR)
        for i in range(40):
            k(T((100, 1000), "float16", ptr=0x100000 * (i + 1)), c, 0.5)
        plan, = k._plans.values()
        print(len(plan.encoded))
    """), sizes=SIZES[:-1])
    assert len(_encodes(log)) == 40
    assert 1 <= int(out) <= rt.plans.MAX_ENCODED


def test_fake_driver_tma_errors(fake_driver, tmp_path):
    out, log = run_fake(fake_driver, tmp_path, """
        import test_tensor_maps as tm
        k = rt.Kernel.from_dict(tm.tma_dict())
        attempt(lambda: k(*tm.tma_args(a_ptr=0xbad0000)))
    """, sizes=SIZES)
    assert out == (
        "ERROR LaunchError cuTensorMapEncodeTiled failed for kernel 'tcopy': "
        "CUDA_ERROR_INVALID_VALUE (invalid argument) (tensor map of argument 'A': "
        "address 0xbad0000, sizes (100, 1000), byte strides (2000, 2), box (64, 64), "
        "swizzle 128 bytes)\n")
    assert not [line for line in log if line.startswith("launch")]


def test_old_driver_without_tma(fake_driver_without_tma, tmp_path):
    out, log = run_fake(fake_driver_without_tma, tmp_path, """
        import test_tensor_maps as tm
        rt.Kernel.from_dict(tm.tma_dict(maps=[]))(*tm.tma_args())
        attempt(lambda: rt.Kernel.from_dict(tm.tma_dict())(*tm.tma_args()))
    """)
    assert out == ("ERROR LaunchError kernel 'tcopy' uses TMA (argument 'A'), but the CUDA "
                   "driver (libcuda.so.1) lacks cuTensorMapEncodeTiled; CUDA 12.0 or later "
                   "is needed\n")
    assert sum(line.startswith("launch") for line in log) == 1


# ---- On a GPU (sm_90) ----------------------------------------------------------------

# out[y][x] = A[y][x] through one TMA copy of a 16 x 16 float32 box per CTA into
# shared memory (zeros outside A), written by hand so that the runtime's maps
# are tested on a GPU independently of the compiler. `out` is A's shape padded
# to whole boxes; the kernel reads its row stride from its descriptor.
TMA_TILE_PTX = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry tma_tile(
  .param .u64 a0, .param .u64 a1, .param .u64 a2, .param .u64 a3, .param .u64 a4,
  .param .u64 a5, .param .u64 a6,
  .param .u64 o0, .param .u64 o1, .param .u64 o2, .param .u64 o3, .param .u64 o4,
  .param .u64 o5, .param .u64 o6,
  .param .align 128 .b8 amap[128])
{
  .reg .pred %p<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<10>;
  .reg .f32 %f<2>;
  .shared .align 128 .b8 tile[1024];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %ctaid.x;
  shl.b32 %r1, %r1, 4;
  mov.u32 %r2, %ctaid.y;
  shl.b32 %r2, %r2, 4;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, bar;
  mov.u32 %r5, tile;
  setp.ne.u32 %p1, %r3, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r4], 1;
  fence.proxy.async.shared::cta;
SYNC:
  bar.sync 0;
  @%p1 bra WAIT;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r4], 1024;
  mov.b64 %rd1, amap;
  cvta.param.u64 %rd2, %rd1;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd2, {%r1, %r2}], [%r4];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p0, [%r4], 0;
  @!%p0 bra WAIT;
  shl.b32 %r6, %r3, 2;
  add.s32 %r6, %r5, %r6;
  ld.shared.f32 %f1, [%r6];
  and.b32 %r7, %r3, 15;
  add.s32 %r7, %r7, %r1;
  shr.u32 %r8, %r3, 4;
  add.s32 %r8, %r8, %r2;
  ld.param.u64 %rd3, [o1];
  ld.param.u64 %rd4, [o5];
  cvt.u64.u32 %rd5, %r8;
  cvt.u64.u32 %rd6, %r7;
  mad.lo.u64 %rd7, %rd5, %rd4, %rd6;
  shl.b64 %rd7, %rd7, 2;
  add.s64 %rd8, %rd3, %rd7;
  st.global.f32 [%rd8], %f1;
  ret;
}
"""


def tma_tile_dict():
    return {"format": "tlc-kernel", "version": 1, "name": "tma_tile", "target": "sm_90a",
            "ptx": TMA_TILE_PTX, "threads": [256, 1, 1],
            "grid": ["ceildiv(Q, 16)", "ceildiv(P, 16)"], "shared_bytes": 0,
            "params": [{"name": "A", "kind": "tensor", "dtype": "float32", "shape": ["M", "K"],
                        "access": "read"},
                       {"name": "out", "kind": "tensor", "dtype": "float32",
                        "shape": ["P", "Q"], "access": "write"}],
            "tensor_maps": [{"param": "A", "box": [16, 16], "swizzle": 0, "fill": "zero"}]}


@pytest.mark.gpu
@pytest.mark.skipif(not _have_cuda_torch(), reason="needs torch with a CUDA GPU")
def test_gpu_tma_tile(runtime_lib):
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code needs a compute capability 9.0 device")
    k = Kernel.from_dict(tma_tile_dict())
    for m, n in [(100, 200), (64, 64)]:
        a = torch.randn(m, n, device="cuda")
        for _ in range(2):  # the full checks, then the fast path with its maps
            out = torch.full((-(-m // 16) * 16, -(-n // 16) * 16), float("nan"), device="cuda")
            k(a, out)
            torch.cuda.synchronize()
            expected = torch.zeros_like(out)
            expected[:m, :n] = a
            torch.testing.assert_close(out, expected, rtol=0, atol=0)
