"""A deterministic, bounded mutation fuzzer for the `tlc` command.

Seeds are the example kernels (examples/*.tile, examples/*.mlir), the `tlc`
lit inputs (test/tlc) and the cases of the pass and dialect lit files (split
at `// -----`), plus test/fuzz/corpus/*.in. Each mutant is one seed changed by
one to three edits (a number replaced by an edge value, a dtype or type
swapped, a line dropped, duplicated or swapped, a token or byte changed, the
file cut short), compiled by `tlc` in a subprocess. A mutant *fails* when the
command dies by a signal, prints an assertion, an `LLVM ERROR` or a Python
traceback, exits with a status other than 0, 1 or 2, fails without a
message, or runs past its time limit. The same seed gives the same mutants.

    python test/fuzz/fuzz.py [--seed 1] [--count 150] [--jobs 2] [--minimise DIR]

With --minimise, each failure is reduced (lines, then tokens) to a small input
that fails the same way and written to DIR with its message.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KNOWN = Path(__file__).resolve().parent / "known"

EDGE_INTS = ["0", "1", "-1", "2", "3", "7", "17", "33", "255", "4096", "65536",
             "2147483647", "2147483648", "4294967296", "9223372036854775808", "-2147483648"]
DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8",
          "bool", "float8_e4m3"]
MLIR_TYPES = ["f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64", "index"]
TIME_LIMIT = 30.0


@dataclass(frozen=True)
class Seed:
    name: str
    suffix: str  # ".tile" or ".mlir"
    text: str


@dataclass
class Outcome:
    returncode: int | None  # None: timed out
    stderr: str


def seeds() -> list[Seed]:
    """The seed inputs, in a fixed order."""
    found = []
    for path in sorted((ROOT / "examples").glob("*.tile")) + \
            sorted((ROOT / "examples").glob("*.mlir")) + sorted((ROOT / "test/tlc").glob("*.*")):
        found.append(Seed(str(path.relative_to(ROOT)), path.suffix, path.read_text()))
    for path in sorted((ROOT / "test/passes").glob("*.mlir")) + [ROOT / "test/dialect/ops.mlir"]:
        for n, case in enumerate(path.read_text().split("// -----")):
            if "tile.kernel" in case:
                found.append(Seed(f"{path.relative_to(ROOT)}#{n}", ".mlir", case))
    for path in sorted((Path(__file__).parent / "corpus").glob("*.in")):
        found.append(Seed(str(path.relative_to(ROOT)), Path(path.stem).suffix, path.read_text()))
    return found


# ---- Mutations ----------------------------------------------------------------------------


def _replace_match(text: str, rng: random.Random, pattern: str, choices: list[str]) -> str:
    matches = list(re.finditer(pattern, text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[:m.start()] + rng.choice(choices) + text[m.end():]


def _lines_edit(text: str, rng: random.Random, kind: str) -> str:
    lines = text.splitlines(keepends=True)
    if len(lines) < 2:
        return text
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if kind == "drop":
        del lines[i]
    elif kind == "dup":
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def _token_swap(text: str, rng: random.Random) -> str:
    tokens = list(re.finditer(r"[A-Za-z_%@#][\w.]*", text))
    if len(tokens) < 2:
        return text
    m = rng.choice(tokens)
    return text[:m.start()] + rng.choice(tokens).group() + text[m.end():]


def _cut(text: str, rng: random.Random) -> str:
    return text[:rng.randrange(len(text))] if text else text


def _splice(text: str, rng: random.Random) -> str:
    if not text:
        return text
    i = rng.randrange(len(text))
    return text[:i] + rng.choice(["(", ")", "[", "]", ",", ":", "{", "}", "\n", " ", "0",
                                  "-", "*", "x", "\"", "\t", "\\", "%", "#"]) + text[i:]


def mutate(seed: Seed, rng: random.Random) -> str | bytes:
    """One mutant of `seed`: one to three random edits (or a byte-level one)."""
    text = seed.text
    if rng.random() < 0.05:  # bytes that are not UTF-8
        data = bytearray(text.encode())
        data[rng.randrange(len(data))] = rng.choice([0x80, 0xFF, 0xC3, 0x00])
        return bytes(data)
    for _ in range(rng.choice([1, 1, 2, 3])):
        op = rng.choice(["int"] * 8 + ["type"] * 4 + ["drop", "dup", "swap"] * 2 +
                        ["token", "cut", "splice"])
        if op == "int":
            text = _replace_match(text, rng, r"(?<![\w.])\d+(?![\w.])", EDGE_INTS)
        elif op == "type":
            if seed.suffix == ".tile":
                text = _replace_match(text, rng, "|".join(DTYPES), DTYPES)
            else:
                text = _replace_match(text, rng, r"\b(f16|bf16|f32|f64|i1|i8|i32|i64|index)\b",
                                      MLIR_TYPES)
        elif op in ("drop", "dup", "swap"):
            text = _lines_edit(text, rng, op)
        elif op == "token":
            text = _token_swap(text, rng)
        elif op == "cut":
            text = _cut(text, rng)
        else:
            text = _splice(text, rng)
    return text


def mutants(seed_value: int, count: int) -> list[tuple[str, str, str | bytes]]:
    """(name, suffix, content) of `count` mutants, the same for the same seed."""
    rng = random.Random(seed_value)
    pool = seeds()
    out = []
    for n in range(count):
        seed = pool[rng.randrange(len(pool))]
        out.append((f"{n:04d}-{seed.name}", seed.suffix, mutate(seed, rng)))
    return out


# ---- Running ---------------------------------------------------------------------------


def tlc_command() -> list[str]:
    return [sys.executable, "-m", "tlc.cli"]


def run(content: str | bytes, suffix: str, folder: str, timeout: float = TIME_LIMIT) -> Outcome:
    """Compiles one input with the `tlc` command, from `folder` (not the checkout,
    whose tlc/ has no native libraries)."""
    fd, path = tempfile.mkstemp(suffix=suffix, dir=folder)
    with os.fdopen(fd, "wb") as f:
        f.write(content.encode() if isinstance(content, str) else content)
    try:
        proc = subprocess.Popen([*tlc_command(), path, "-o", os.devnull], cwd=folder,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return Outcome(None, "")
        return Outcome(proc.returncode, err.decode("utf-8", "replace").replace(path, "INPUT"))
    finally:
        os.unlink(path)


def failure(outcome: Outcome) -> str | None:
    """Why an outcome is a failure (one line, its signature), or None."""
    err = outcome.stderr
    if outcome.returncode is None:
        return f"timeout after {TIME_LIMIT:.0f} s"
    for line in err.splitlines():
        if "LLVM ERROR" in line:
            return line[line.index("LLVM ERROR"):].strip()
        assertion = re.search(r"(?:^|: )[^:\s]*:\d+: (.*): (Assertion .* failed\.?)", line)
        if assertion:  # program: file:line: function: Assertion `...' failed.
            return f"{assertion.group(2)} in {assertion.group(1)}"
    if "Traceback (most recent call last)" in err:
        last = [line for line in err.splitlines() if line.strip()][-1]
        return f"Python traceback: {last.strip()}"
    if outcome.returncode < 0:
        return f"signal {signal.Signals(-outcome.returncode).name}"
    if outcome.returncode not in (0, 1, 2):
        return f"exit status {outcome.returncode}"
    if outcome.returncode != 0 and not err.strip():
        return "failed without a message"
    return None


def known_signatures() -> dict[str, str]:
    """Signature -> name of the recorded, not yet fixed crashes (test/fuzz/known)."""
    known = {}
    for note in sorted(KNOWN.glob("*.txt")):
        for line in note.read_text().splitlines():
            if line.startswith("signature: "):
                known[line.removeprefix("signature: ")] = note.stem
    return known


def campaign(seed_value: int, count: int, jobs: int, folder: str):
    """[(name, suffix, content, signature)] of the failing mutants."""
    items = mutants(seed_value, count)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(pool.map(lambda m: run(m[2], m[1], folder), items))
    return [(name, suffix, content, why) for (name, suffix, content), outcome
            in zip(items, outcomes) if (why := failure(outcome))]


# ---- Minimising ---------------------------------------------------------------------------


def minimise(content: str | bytes, suffix: str, signature: str, folder: str) -> str | bytes:
    """A smaller input that fails with the same signature (lines, then tokens)."""
    def fails(candidate) -> bool:
        return failure(run(candidate, suffix, folder)) == signature

    if isinstance(content, bytes):
        return content
    for split in (lambda t: t.splitlines(keepends=True),
                  lambda t: re.findall(r"\s+|\w+|.", t)):
        parts = split(content)
        chunk = max(len(parts) // 2, 1)
        while chunk >= 1:
            i, changed = 0, False
            while i < len(parts):
                candidate = parts[:i] + parts[i + chunk:]
                if candidate and fails("".join(candidate)):
                    parts, changed = candidate, True
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        content = "".join(parts)
    return content


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=150)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--minimise", metavar="DIR", help="write minimised failures here")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        found = campaign(args.seed, args.count, args.jobs, folder)
        for name, suffix, content, why in found:
            print(f"{name}: {why}")
            if args.minimise:
                small = minimise(content, suffix, why, folder)
                out = Path(args.minimise) / (re.sub(r"\W", "_", name) + suffix + ".in")
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(small.encode() if isinstance(small, str) else small)
                print(f"  -> {out} ({len(small)} bytes)")
    print(f"{len(found)} failures in {args.count} mutants (seed {args.seed})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
