"""Frontend checks that keep wrong programs out: integer constants that do not
fit their type, constant indices outside an on-chip buffer; and a legal
program that used to be refused (T.if_then_else of two constants)."""

from pathlib import Path

import pytest

import tlc
import tlc.language as T

from test_frontend_errors import build_error
import marked_lines

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def line_of(marker: str) -> int:
    return marked_lines.line_of(LINES, marker)


def error_at(prim, marker: str, *message: str) -> str:
    error = build_error(prim)
    loc = error.location
    assert (loc.file, loc.line) == (THIS, line_of(marker)), str(error)
    text = str(error)
    for part in message:
        assert part in text, text
    assert "tlc cannot compile this" not in text and "internal" not in text, text
    return text


def int_program(value, dtype="int32"):
    @T.prim_func
    def add_const(X: T.Tensor((256,), dtype), Y: T.Tensor((256,), dtype)):
        with T.Kernel(2, threads=128) as bx:
            x = T.alloc_fragment((128,), dtype)
            T.copy(X[bx * 128], x)
            for i in T.Parallel(128):
                x[i] = x[i] + value  # E:int-const
            T.copy(x, Y[bx * 128])

    return add_const


@pytest.mark.parametrize("value, dtype", [(2**40 + 5, "int32"), (2**32, "int32"),
                                          (-(2**31) - 1, "int32"), (256, "int8"),
                                          (2**64, "int64"), (-129, "uint8")])
def test_integer_constant_that_does_not_fit(value, dtype):
    error_at(int_program(value, dtype), "int-const",
             f"the integer constant {value} does not fit in {dtype}")


@pytest.mark.parametrize("value, dtype, printed", [(2**31 - 1, "int32", "2147483647"),
                                                   (-(2**31), "int32", "-2147483648"),
                                                   (0xFFFFFFFF, "int32", "-1"),
                                                   (255, "uint8", "-1")])
def test_integer_constants_that_fit(value, dtype, printed):
    tile_ir = str(int_program(value, dtype).build_module())
    assert f"arith.constant {printed} :" in tile_ir


def test_explicit_cast_of_a_constant_that_does_not_fit():
    @T.prim_func
    def cast(Y: T.Tensor((128,), "int8")):
        with T.Kernel(1, threads=128):
            y = T.alloc_fragment((128,), "int8")
            for i in T.Parallel(128):
                y[i] = T.cast(1000, "int8")  # E:cast
            T.copy(y, Y[0])

    error_at(cast, "cast", "1000 does not fit in int8")


def index_program(place, index):
    alloc = {"shared": T.alloc_shared, "fragment": T.alloc_fragment, "local": T.alloc_local}[place]

    @T.prim_func
    def read(X: T.Tensor((128, 64), "float32"), Y: T.Tensor((128, 64), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((128, 64), "float32")
            b = alloc((16, 64), "float32")
            y = T.alloc_fragment((128, 64), "float32")
            T.copy(X[0, 0], s)
            if place == "local":
                T.fill(b, 0.0)
            else:
                T.copy(s[0:16, 0:64], b)
            for i, j in T.Parallel(128, 64):
                y[i, j] = s[i, j] + b[index[0], index[1]]  # E:index
            T.copy(y, Y[0, 0])

    return read


@pytest.mark.parametrize("place", ["shared", "fragment", "local"])
@pytest.mark.parametrize("index, dim, value", [((16, 0), 0, 16), ((0, 64), 1, 64),
                                               ((-1, 0), 0, -1), ((3, 100), 1, 100)])
def test_constant_index_outside_an_on_chip_buffer(place, index, dim, value):
    text = error_at(index_program(place, index), "index",
                    f"index {value} is outside dimension {dim} of 'b' (shape [16, 64], {place})")
    col = LINES[line_of("index") - 1].index("index[" + str(dim)) + 1
    assert text.splitlines()[0].startswith(f"{THIS}:{line_of('index')}:{col}:"), text


def test_constant_index_inside_is_accepted():
    assert "memref.load" in str(index_program("shared", (15, 63)).build_module())


def test_store_to_a_constant_index_outside():
    @T.prim_func
    def store(Y: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            acc = T.alloc_local((4,), "float32")
            acc[4] = 1.0  # E:store
            y = T.alloc_fragment((128,), "float32")
            for i in T.Parallel(128):
                y[i] = acc[0]
            T.copy(y, Y[0])

    error_at(store, "store", "index 4 is outside dimension 0 of 'acc'")


def select_program(then, other, dtype):
    @T.prim_func
    def select(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), dtype)):
        with T.Kernel(1, threads=128):
            x = T.alloc_fragment((128,), "float32")
            y = T.alloc_fragment((128,), dtype)
            T.copy(X[0], x)
            for i in T.Parallel(128):
                y[i] = T.if_then_else(x[i] > 0, then, other)
            T.copy(y, Y[0])

    return select


@pytest.mark.parametrize("then, other, dtype, select_type", [
    (1.0, 0.0, "float32", "f32"), (1.0, 0.0, "float16", "f32"), (1, 0.5, "float32", "f32"),
    (3, -2, "int32", "index"),
])
def test_if_then_else_of_two_constants(then, other, dtype, select_type):
    kernel = tlc.compile(select_program(then, other, dtype))
    tile_ir = kernel.get_mlir("tile")
    assert "arith.select" in tile_ir and f": {select_type}" in tile_ir.split("arith.select")[1]
    assert ".entry select(" in kernel.get_kernel_source()


def test_if_then_else_of_two_bools_builds():
    # (compiling an element access to a bool buffer aborts in the C++ lowering: issue 13)
    tile_ir = str(select_program(True, False, "bool").build_module())
    assert "arith.select" in tile_ir and ": i1" in tile_ir.split("arith.select")[1]


@pytest.mark.parametrize("place, shape, dtype", [("shared", (128, 2**24), "float16"),
                                                 ("fragment", (2**31,), "float32"),
                                                 ("local", (2**29, 4), "int8")])
def test_on_chip_buffer_past_32_bit_offsets(place, shape, dtype):
    alloc = {"shared": T.alloc_shared, "fragment": T.alloc_fragment, "local": T.alloc_local}[place]

    @T.prim_func
    def huge(Y: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            b = alloc(shape, dtype)  # E:huge
            T.fill(b, 0)

    error_at(huge, "huge", f"a {place} buffer of shape {shape} and dtype {dtype} takes",
             "32-bit offsets")


def loop_program(ij, guarded=False):
    """s[a * i + b, c * j + d] for ij = (a, b, c, d), i and j T.Parallel indices."""
    a, b, c, d = ij

    @T.prim_func
    def shifted(X: T.Tensor((128, 64), "float32"), Y: T.Tensor((128, 64), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((128, 64), "float32")
            y = T.alloc_fragment((128, 64), "float32")
            T.copy(X[0, 0], s)
            for i, j in T.Parallel(128, 64):
                if guarded:
                    if i > 0 and i < 127:
                        y[i, j] = s[a * i + b, c * j + d]
                else:
                    y[i, j] = s[a * i + b, c * j + d]  # E:affine
            T.copy(y, Y[0, 0])

    return shifted


@pytest.mark.parametrize("ij, dim, values", [
    ((1, 1, 1, 0), 0, "1 to 128"), ((1, -1, 1, 0), 0, "-1 to 126"),
    ((1, 0, 2, 0), 1, "0 to 126"), ((-1, 128, 1, 0), 0, "1 to 128"),
])
def test_affine_index_of_loop_indices_outside_a_buffer(ij, dim, values):
    error_at(loop_program(ij), "affine", f"takes the values {values}, outside "
             f"dimension {dim} of 's' (shape [128, 64], shared)")


def test_affine_indices_inside_or_guarded_are_accepted():
    assert "memref.load" in str(loop_program((-1, 127, -1, 63)).build_module())
    guarded = loop_program((1, 1, 1, 0), guarded=True)
    assert "memref.load" in str(guarded.build_module())


def test_serial_loop_index_outside_a_local_buffer():
    @T.prim_func
    def prefix(Y: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            acc = T.alloc_local((16,), "float32")
            T.fill(acc, 1.0)
            for k in T.serial(1, 16):
                acc[k] = acc[k - 1] + 1.0
            for k in T.serial(0, 16, 4):
                acc[k + 4] = 0.0  # E:serial
            y = T.alloc_fragment((128,), "float32")
            for i in T.Parallel(128):
                y[i] = acc[15]
            T.copy(y, Y[0])

    error_at(prefix, "serial", "takes the values 4 to 16, outside dimension 0 of 'acc'")


def test_a_file_of_many_kernels_is_parsed_once(tmp_path, monkeypatch):
    """Compile time linear in the kernels of a file: each @T.prim_func used to
    parse the whole file again to find its definition."""
    import ast

    from tlc.frontend.tile_file import load_tile_file

    kernel = ("@T.prim_func\ndef k{n}(X: T.Tensor((128,), 'float32')):\n"
              "    with T.Kernel(1, threads=128):\n"
              "        x = T.alloc_fragment((128,), 'float32')\n"
              "        T.fill(x, {n}.0)\n        T.copy(x, X[0])\n\n\n")
    source = tmp_path / "many.tile"
    source.write_text("".join(kernel.format(n=n) for n in range(30)))
    parses = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *a, **k: parses.append(1) or real(*a, **k))
    kernels = load_tile_file(str(source))
    assert list(kernels) == [f"k{n}" for n in range(30)]
    assert len(parses) <= 2, len(parses)  # the .tile loader's, and one to find the defs
    assert [kernels[f"k{n}"].node.name for n in (0, 29)] == ["k0", "k29"]
    assert "4.000000e+00" in str(kernels["k4"].build_module())


@pytest.mark.parametrize("grid, axis, size", [((2**31, 1, 1), "x", 2**31),
                                              ((1, 65536, 1), "y", 65536),
                                              ((1, 1, 2**64), "z", 2**64)])
def test_constant_grid_past_the_launch_limits(grid, axis, size):
    gx, gy, gz = grid

    @T.prim_func
    def wide(X: T.Tensor((128,), "float32")):
        with T.Kernel(gx, gy, gz, threads=128):  # E:grid
            x = T.alloc_fragment((128,), "float32")
            T.fill(x, 1.0)
            T.copy(x, X[0])

    error_at(wide, "grid", f"grid dimension {axis} is {size}, more than the")
