"""Compiles every bench/build_*.py artifact and records the hash of each PTX.

    python tools/ptx_snapshot.py OUT_DIR [--compare BASE_DIR] [--only NAME ...]

A refactoring of the compiler that should not change its output is checked by
taking a snapshot before and after and comparing them: each artifact's PTX
(and the rest of its metadata, the check entry excepted) must be byte-identical.
Writes OUT_DIR/<builder>/*.tlcart and OUT_DIR/manifest.json ({artifact: sha256
of its PTX, ...}); with --compare, lists the artifacts whose PTX or metadata
differ from BASE_DIR's and exits 1 if any does. No GPU is needed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def builders(only: list[str]) -> list[Path]:
    found = sorted((ROOT / "bench").glob("build_*.py"))
    if only:
        found = [p for p in found if p.stem in only or p.stem.removeprefix("build_") in only]
    return found


def run_builder(script: Path, out: Path) -> tuple[str, int, str]:
    dest = out / script.stem
    dest.mkdir(parents=True, exist_ok=True)
    # The checkout's tlc/ (with the native modules of build/, tlc/source_tree.py),
    # not an installed one, so a rebuilt build/ is what gets measured.
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, TLC_CACHE_DIR=str(out / ".cache"), PYTHONPATH=path)
    proc = subprocess.run([sys.executable, str(script), str(dest)], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    return script.stem, proc.returncode, proc.stderr[-4000:]


def digest(path: Path) -> dict:
    data = json.loads(path.read_text())
    data.pop("check", None)
    ptx = data.pop("ptx", "")
    return {"ptx": hashlib.sha256(ptx.encode()).hexdigest(),
            "meta": hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()}


def manifest(out: Path) -> dict:
    return {str(p.relative_to(out)): digest(p) for p in sorted(out.glob("build_*/**/*.tlcart"))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--compare", type=Path, help="a snapshot to compare with")
    ap.add_argument("--only", nargs="*", default=[], help="builders to run (default: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    failed = False
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, rc, err in pool.map(lambda s: run_builder(s, args.out), builders(args.only)):
            print(f"{name}: {'ok' if rc == 0 else f'FAILED ({rc})'}")
            if rc:
                failed = True
                print(err, file=sys.stderr)
    mine = manifest(args.out)
    (args.out / "manifest.json").write_text(json.dumps(mine, indent=1) + "\n")
    print(f"{len(mine)} artifacts")
    if not args.compare:
        return 1 if failed else 0
    base = json.loads((args.compare / "manifest.json").read_text())
    if args.only:
        base = {k: v for k, v in base.items() if k.split("/")[0] in {b.stem for b in builders(args.only)}}
    differ = sorted(k for k in base.keys() & mine.keys() if base[k] != mine[k])
    missing = sorted(base.keys() - mine.keys())
    extra = sorted(mine.keys() - base.keys())
    for k in differ:
        what = [part for part in ("ptx", "meta") if base[k][part] != mine[k][part]]
        print(f"DIFFERS ({', '.join(what)}): {k}")
    for k in missing:
        print(f"MISSING: {k}")
    for k in extra:
        print(f"NEW: {k}")
    same = len(base.keys() & mine.keys()) - len(differ)
    print(f"{same} identical, {len(differ)} differ, {len(missing)} missing, {len(extra)} new")
    return 1 if failed or differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
