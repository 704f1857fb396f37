"""Smoke test of an installed tlc wheel, run by tools/wheel_smoke.sh with the
Python of a fresh virtual environment, from a temporary folder.

    python wheel_smoke.py WORKDIR CHECKOUT

Checks that `tlc` is the installed package (not the checkout's tlc/), compiles
an elementwise add written here through @tlc.jit, writes its PTX and artifact
and loads the artifact back, runs the `tlc` console script on
examples/elementwise.tile (PTX and artifact) and `tlc-opt --help`, and
assembles every PTX with `ptxas -arch=sm_90a` when ptxas is on PATH. Prints one
line per check; exits 1 with the failing check's message.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path


class SmokeError(Exception):
    """A check failed; the message says which and why."""


def check_installed_package(checkout: Path) -> None:
    """tlc and its native modules come from this environment's site-packages."""
    import tlc

    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    package = Path(tlc.__file__).resolve().parent
    if package.parent != site:
        raise SmokeError(f"tlc was imported from {package}, not from {site}")
    if checkout.resolve() in package.parents:
        raise SmokeError(f"tlc was imported from the checkout ({package})")
    try:
        from tlc._mlir_libs import _mlir  # noqa: F401
    except ImportError as e:
        raise SmokeError(f"tlc's native modules do not load: {e}") from None

    print(f"ok: tlc {tlc.__version__} imported from {package}")


def compile_add(workdir: Path) -> list[Path]:
    """An elementwise add through @tlc.jit: PTX and an artifact written, the
    artifact loaded back. Returns the PTX files written."""
    import tlc
    import tlc.language as T

    @tlc.jit(out_idx=[-1], target="sm_90a")
    def add(n, block=256, dtype="float32"):
        @T.prim_func
        def add_kernel(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype),
                       C: T.Tensor((n,), dtype)):
            with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
                a = T.alloc_fragment((block,), dtype)
                b = T.alloc_fragment((block,), dtype)
                T.copy(A[bx * block], a)
                T.copy(B[bx * block], b)
                for i in T.Parallel(block):
                    a[i] += b[i]
                T.copy(a, C[bx * block])

        return add_kernel

    kernel = add(4096)
    ptx = kernel.get_kernel_source()
    if ".entry add_kernel" not in ptx or not re.search(r"\badd(\.rn)?\.f32\b", ptx):
        raise SmokeError("the add kernel's PTX has no .entry add_kernel or no f32 add")
    ptx_path = workdir / "add.ptx"
    ptx_path.write_text(ptx)
    artifact_path = workdir / "add.tlcart"
    kernel.save(str(artifact_path))
    loaded = tlc.runtime.load_artifact(artifact_path)
    if loaded.to_dict()["ptx"] != ptx:
        raise SmokeError(f"{artifact_path} loads back with a different PTX")
    # The runtime's native parts ship with the wheel: libtlc_runtime.so and
    # the native launch path (tlc.runtime._launch, built where Python's
    # development files are, which the bindings need anyway).
    from tlc.runtime import plans

    runtime_dir = Path(tlc.runtime.__file__).parent
    if not (runtime_dir / "libtlc_runtime.so").is_file():
        raise SmokeError(f"no libtlc_runtime.so in {runtime_dir}")
    if plans.native_module() is None:
        raise SmokeError(f"tlc.runtime._launch (the native launch path) does not import from "
                         f"{runtime_dir}")
    cache = Path(os.environ["TLC_CACHE_DIR"])
    if not any(cache.glob("*.json")):
        raise SmokeError(f"no disk-cache entry was written in {cache}")
    print(f"ok: @tlc.jit add -> {ptx_path.name} ({len(ptx)} bytes), {artifact_path.name}")
    return [ptx_path]


def run(command: list[str], what: str) -> subprocess.CompletedProcess:
    """Runs a command; a non-zero exit is a SmokeError showing its output."""
    result = subprocess.run(command, check=False, capture_output=True, text=True)
    if result.returncode != 0:
        raise SmokeError(f"{what} failed (exit {result.returncode}): {' '.join(command)}\n"
                         f"{result.stdout}{result.stderr}")
    return result


def run_commands(workdir: Path, checkout: Path) -> list[Path]:
    """The `tlc` console script on examples/elementwise.tile and `tlc-opt
    --help`, both from this environment's scripts folder."""
    scripts = Path(sysconfig.get_paths()["scripts"])
    tile = workdir / "elementwise.tile"
    shutil.copyfile(checkout / "examples" / "elementwise.tile", tile)
    ptx_path, artifact_path = workdir / "vadd.ptx", workdir / "vadd.tlcart"
    tlc_command = str(scripts / "tlc")
    run([tlc_command, str(tile), "--kernel", "vadd", "-o", str(ptx_path)], "tlc (PTX)")
    run([tlc_command, str(tile), "--kernel", "vadd", "--emit=artifact", "-o",
         str(artifact_path)], "tlc (artifact)")
    artifact = json.loads(artifact_path.read_text())
    if artifact.get("name") != "vadd" or ".entry" not in artifact.get("ptx", ""):
        raise SmokeError(f"{artifact_path} is not vadd's artifact")
    if ".entry" not in ptx_path.read_text():
        raise SmokeError(f"{ptx_path} holds no .entry")
    print(f"ok: tlc elementwise.tile -> {ptx_path.name}, {artifact_path.name}")
    result = run([str(scripts / "tlc-opt"), "--help"], "tlc-opt --help")
    if "tile-infer-layout" not in result.stdout:
        raise SmokeError("tlc-opt --help does not list tile-infer-layout")
    print("ok: tlc-opt --help lists the tile passes")
    return [ptx_path]


def assemble(ptx_files: list[Path]) -> None:
    """ptxas -arch=sm_90a on each PTX file, when ptxas is on PATH."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        print("skipped: ptxas is not on PATH")
        return
    for ptx in ptx_files:
        cubin = ptx.with_suffix(".cubin")
        run([ptxas, "-arch=sm_90a", str(ptx), "-o", str(cubin)], f"ptxas {ptx.name}")
        print(f"ok: ptxas -arch=sm_90a {ptx.name}")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    workdir, checkout = Path(argv[1]), Path(argv[2])
    os.environ["TLC_CACHE_DIR"] = str(workdir / "cache")
    try:
        check_installed_package(checkout)
        ptx_files = compile_add(workdir)
        ptx_files += run_commands(workdir, checkout)
        assemble(ptx_files)
    except SmokeError as e:
        print(f"wheel smoke test failed: {e}", file=sys.stderr)
        return 1
    print("wheel smoke test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
