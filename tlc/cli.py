"""The `tlc` command: tile IR (.mlir) -> PTX, an artifact, or IR at a stage."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from .errors import CompilationError

EMITS = {"tile": "optimized", "gpu": "gpu", "nvvm": "nvvm", "ptx": "ptx", "artifact": "ptx"}


def _write_atomically(path: str, text: str) -> None:
    """Writes `text` to `path` through a temporary file: no partial output."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tlc-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tlc", description="Compile tile IR to PTX for NVIDIA GPUs."
    )
    parser.add_argument("input", help="a tile-dialect .mlir file ('-' for stdin)")
    parser.add_argument("-o", "--output", default="-", help="output file ('-': stdout)")
    parser.add_argument("--emit", choices=sorted(EMITS), default="ptx",
                        help="what to write (default: ptx)")
    parser.add_argument("--arch", default=None, help="target GPU (default: sm_90a)")
    parser.add_argument("--kernel", default=None,
                        help="which kernel to emit when the input has several")
    args = parser.parse_args(argv)

    from . import compiler

    try:
        if args.input == "-":
            text, filename = sys.stdin.read(), "<stdin>"
        else:
            with open(args.input) as f:
                text, filename = f.read(), args.input
        compiled = compiler.compile_text(text, args.arch, filename,
                                         stop_after=EMITS[args.emit], keep_ir=True)
        if args.emit == "artifact":
            output = json.dumps(compiled.artifact(args.kernel), indent=1) + "\n"
        elif args.emit == "ptx":
            names = [args.kernel] if args.kernel else sorted(compiled.ptx)
            unknown = [n for n in names if n not in compiled.ptx]
            if unknown:
                raise CompilationError(f"no kernel named '{unknown[0]}' "
                                       f"(kernels: {', '.join(sorted(compiled.ptx))})")
            output = "".join(compiled.ptx[n] for n in names)
        else:
            output = compiled.stages[EMITS[args.emit]]
    except CompilationError as e:
        print(e, file=sys.stderr)
        return 1
    except OSError as e:
        print(f"tlc: error: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(output)
    else:
        _write_atomically(args.output, output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
