"""The mutation fuzzer (test/fuzz/fuzz.py) over the examples and the lit
inputs: a fixed seed's mutants must not crash the `tlc` command (no signal,
assertion, LLVM ERROR, traceback or timeout). Crashes found in the C++ side
and not fixed yet are recorded, minimised, under test/fuzz/known/: each is a
strict xfail here, so fixing one makes its test fail until its record is
removed (and with it, the fuzz test's tolerance of its signature)."""

import os
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
sys.path.insert(0, str(FUZZ))
import fuzz  # noqa: E402

SEED = 1
COUNT = int(os.environ.get("TLC_FUZZ_COUNT", "100"))  # about 25 s on 2 cores


def test_mutants_do_not_crash_tlc(tmp_path):
    found = fuzz.campaign(SEED, COUNT, jobs=2, folder=str(tmp_path))
    known = fuzz.known_signatures()
    new = [f"{name}: {why}" for name, _, _, why in found if why not in known]
    assert not new, ("tlc crashed on these mutants (reproduce and minimise with "
                     f"`python test/fuzz/fuzz.py --seed {SEED} --count {COUNT} --minimise DIR`):\n"
                     + "\n".join(new))


def _known_cases():
    cases = []
    for note in sorted((FUZZ / "known").glob("*.txt")) if (FUZZ / "known").is_dir() else []:
        fields = dict(line.split(": ", 1) for line in note.read_text().splitlines()
                      if ": " in line)
        (source,) = [p for p in note.parent.glob(note.stem + ".*.in")]
        cases.append(pytest.param(source, fields["signature"], id=note.stem,
                                  marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                                         reason=fields["reason"])))
    return cases


if _known_cases():  # (no records: nothing to expect to fail)
    @pytest.mark.parametrize("source, signature", _known_cases())
    def test_known_crash_is_fixed(source, signature, tmp_path):
        suffix = Path(source.stem).suffix
        outcome = fuzz.run(source.read_bytes(), suffix, str(tmp_path))
        why = fuzz.failure(outcome)
        assert why is None, f"{source.name}: still {why}"
        assert signature  # (fixed: remove its record, and the fuzz test's tolerance with it)


@pytest.mark.parametrize("source", sorted((FUZZ / "fixed").glob("*.in")), ids=lambda p: p.stem)
def test_fixed_crash_stays_fixed(source, tmp_path):
    """Inputs that crashed tlc once (bool element access, a layout dividing by
    -1, a zero-size fragment, a swizzle for 128 KiB rows) now end in a
    message."""
    outcome = fuzz.run(source.read_bytes(), Path(source.stem).suffix, str(tmp_path))
    assert fuzz.failure(outcome) is None, f"{source.name}: {fuzz.failure(outcome)}"


def test_fuzzer_is_deterministic_and_sees_failures(tmp_path):
    assert fuzz.mutants(SEED, 5) == fuzz.mutants(SEED, 5)
    assert fuzz.mutants(SEED, 5) != fuzz.mutants(SEED + 1, 5)
    assert fuzz.failure(fuzz.Outcome(-11, "")) == "signal SIGSEGV"
    assert fuzz.failure(fuzz.Outcome(None, "")).startswith("timeout")
    assert fuzz.failure(fuzz.Outcome(1, "Traceback (most recent call last):\n  x\nKeyError: 3\n")) \
        == "Python traceback: KeyError: 3"
    assert fuzz.failure(fuzz.Outcome(1, "LLVM ERROR: out of memory\n")) == \
        "LLVM ERROR: out of memory"
    assert fuzz.failure(fuzz.Outcome(1, "")) == "failed without a message"
    assertion = ("python: /x/llvm/Casting.h:566: decltype(auto) llvm::cast(From&) [with To = A]: "
                 "Assertion `isa<To>(Val)' failed.\n")
    assert fuzz.failure(fuzz.Outcome(-6, assertion)) == \
        "Assertion `isa<To>(Val)' failed. in decltype(auto) llvm::cast(From&) [with To = A]"
    assert fuzz.failure(fuzz.Outcome(1, "x.tile:1:1: error: bad\n")) is None
