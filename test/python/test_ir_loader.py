"""tlc.ir is imported without numpy where numpy is not loaded yet
(tlc/ir_loader.py): a compile does not pay numpy's import, and the four
attribute builders MLIR's ir.py registers with numpy still work."""

import subprocess
import sys
import textwrap


def run(code: str, tmp_path) -> str:
    """Runs `code` as a script in a fresh process (the frontend reads its source)."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_compile_without_numpy(tmp_path):
    out = run("""
        import sys
        import tlc
        import tlc.language as T

        @T.prim_func
        def double(A: T.Tensor((1024,), "float32"), B: T.Tensor((1024,), "float32")):
            with T.Kernel(8, threads=128) as bx:
                for i in T.Parallel(128):
                    B[bx * 128 + i] = A[bx * 128 + i] * 2.0

        ptx = tlc.compile(double, target="sm_90a").get_kernel_source()
        print(".entry" in ptx, "numpy" in sys.modules)
    """, tmp_path)
    assert out == "True False"


def test_lazy_dense_builders(tmp_path):
    out = run("""
        import sys
        import tlc
        from tlc import ir
        from tlc.compiler import new_context

        assert "numpy" not in sys.modules
        with new_context() as ctx:
            for kind in ("F64ElementsAttr", "I32ElementsAttr", "I64ElementsAttr",
                         "IndexElementsAttr"):
                print(ir.AttrBuilder.get(kind)([1, 2], ctx))
        print("numpy" in sys.modules)
    """, tmp_path)
    assert out.splitlines() == [
        "dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf64>",
        "dense<[1, 2]> : tensor<2xi32>", "dense<[1, 2]> : tensor<2xi64>",
        "dense<[1, 2]> : tensor<2xindex>", "True"]


def test_numpy_loaded_first_keeps_mlirs_builders(tmp_path):
    out = run("""
        import numpy
        import tlc
        from tlc import ir

        print(ir.AttrBuilder.get("I64ElementsAttr").__module__)
    """, tmp_path)
    assert out == "tlc.ir"
