#!/usr/bin/env python3
"""The family programs of examples/families/ on a GPU, against torch.

    python test/gpu/families_check.py build DIR [FAMILY ...]   # here: compiles
    python test/gpu/families_check.py run DIR [FAMILY ...]     # on the device

Each family module has `gpu_kernels()`, which compiles (through its
@tilelang.jit factories) every kernel its `gpu_check()` launches, and
`gpu_check()`, which makes those kernels through the same calls and runs them
against torch references (NaN-poisoned outputs), returning PASS lines. A
machine with a GPU and a built tlc runs `gpu_check()` as it is (`python
examples/families/<family>.py`). The project's GPU machine has no compiler
build (another Python), so the work is split in two:

- `build` runs every `gpu_kernels()` here (no torch, no GPU), saving each
  kernel a factory call compiles as DIR/<key>.json (artifact, out_idx),
  keyed by the factory, its arguments and the resolved target.
- `run` runs every `gpu_check()` with each factory call loading the kernel
  saved under its key instead of compiling (a missing one is an error naming
  the call), and prints the PASS lines, or the failure, of each family.
  Exits 1 if a family failed.
"""


import hashlib
import importlib.util
import json
import os
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
FAMILIES = ROOT / "examples" / "families"


def families(names) -> list[str]:
    found = sorted(p.stem for p in FAMILIES.glob("*.py") if not p.stem.startswith("_"))
    unknown = set(names) - set(found)
    if unknown:
        raise SystemExit(f"no such family: {', '.join(sorted(unknown))}")
    return list(names) or found


def load(family: str):
    spec = importlib.util.spec_from_file_location(f"family_{family}", FAMILIES / f"{family}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def key_of(factory, args, kwargs, target: str) -> str:
    fn = factory.factory
    call = f"{Path(fn.__code__.co_filename).stem}.{fn.__qualname__}|{args!r}|" \
           f"{sorted(kwargs.items())!r}|out_idx={factory.out_idx!r}|{target}"
    return hashlib.sha256(call.encode()).hexdigest()[:24]


def build(out: Path, names) -> int:
    jit = importlib.import_module("tlc.jit")

    out.mkdir(parents=True, exist_ok=True)
    saved = []
    compile_call = jit.JITFactory.__call__

    def recording_call(self, *args, **kwargs):
        kernel = compile_call(self, *args, **kwargs)
        target = self.options.resolve_target(jit._default_target())
        key = key_of(self, args, kwargs, target)
        (out / f"{key}.json").write_text(json.dumps(
            {"artifact": kernel.artifact, "out_idx": self.out_idx,
             "call": f"{self.factory.__qualname__}{args!r} {kwargs!r} for {target}"}))
        saved.append(key)
        return kernel

    jit.JITFactory.__call__ = recording_call
    failed = 0
    for family in families(names):
        before = len(saved)
        try:
            load(family).gpu_kernels()
            print(f"built {family}: {len(saved) - before} kernels")
        except Exception:  # noqa: BLE001  (reported, then the next family)
            failed += 1
            print(f"FAILED to build {family}:\n{traceback.format_exc()}")
    return 1 if failed else 0


def run(src: Path, names) -> int:
    jit = importlib.import_module("tlc.jit")

    def loading_call(self, *args, **kwargs):
        target = self.options.resolve_target(jit._default_target())
        path = src / f"{key_of(self, args, kwargs, target)}.json"
        if not path.exists():
            raise RuntimeError(f"no kernel built for {self.factory.__qualname__}{args!r} "
                               f"{kwargs!r} for {target} (run `build` again)")
        saved = json.loads(path.read_text())
        return jit.JITKernel(saved["artifact"], {}, saved["out_idx"])

    jit.JITFactory.__call__ = loading_call
    failed = 0
    for family in families(names):
        try:
            for line in load(family).gpu_check():
                print(line, flush=True)
        except Exception:  # noqa: BLE001
            failed += 1
            print(f"FAIL {family}:\n{traceback.format_exc()}", flush=True)
    print(f"{len(families(names)) - failed} of {len(families(names))} families pass")
    return 1 if failed else 0


def main(argv) -> int:
    if len(argv) < 2 or argv[0] not in ("build", "run"):
        print(__doc__)
        return 2
    folder, names = Path(argv[1]), argv[2:]
    return build(folder, names) if argv[0] == "build" else run(folder, names)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
