"""Compile the atomics and warp-level checks (no GPU needed).

    python bench/build_atomics.py OUT_DIR

T.atomic_add of tiles (a fragment by its origin, a shared tile by slices, a
gemm accumulator whose column pairs are vector reductions on sm_90, a
shared tile added through TMA (use_tma=True),
one value into a region), T.atomic_addx2 / x4 (vector reductions, a group
straddling the tensor's end), T.atomic_add(..., return_prev=True) handing out
slots, T.atomic_max / T.atomic_min of float32 and int32 elements, with
memory orders, and a histogram counted in shared memory; warp shuffles
(a butterfly sum, down/up/idx within groups of lanes) with the lane, warp
and warpgroup indices, warp votes (any/all/ballot) and T.activemask under an
`if`, the program's own barriers and a named-barrier hand-off between warpgroups
(test_warp.py); T.atomic_load / T.atomic_store (test_atomics.py); T.cumsum
and T.cummax of shared and fragment tiles (test_scans.py). Each is written
as OUT_DIR/<name>.tlcart with a check for test/gpu/run_artifacts.py.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
sys.path.insert(0, HERE)

import tlc  # noqa: E402
import tlc.language as T  # noqa: E402
from checks import save_checked  # noqa: E402
from test_atomics import (_accumulator_adds, _shared_tile_adds, _splitk_tiles,  # noqa: E402
                          _tma_adds, _vector_adds, compact, flags, shared_histogram)
from test_scans import _scans  # noqa: E402
from test_warp import handoff, reverse, shifts, votes_program, warp_sums  # noqa: E402


def extremes(dtype):
    @T.prim_func
    def ext(X: T.Tensor((4, 64), dtype), Hi: T.Tensor((64,), dtype),
            Lo: T.Tensor((64,), dtype)):
        with T.Kernel(4, threads=64) as b:
            for j in T.Parallel(64):
                T.atomic_max(Hi[j], X[b, j], memory_order="release")
                T.atomic_min(Lo[j], X[b, j], memory_order="acq_rel")

    return ext


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    save_checked(tlc.compile(_splitk_tiles(), target="sm_90a").artifact,
                 {"expect": {"C": "C + 6 * A", "D": "torch.stack([torch.cat([D[0, :4] + 3, D[0, 4:]]), "
                                                    "D[1] + 6 * A])"},
                  "atol": 1e-4, "rtol": 1e-5, "seed": 1},
                 os.path.join(out, "atomic_tiles.tlcart"))
    save_checked(tlc.compile(compact, target="sm_90a").artifact,
                 {"inputs": {"X": "arange", "Count": "zeros"},
                  "expect": {"Count": "(X % 3 == 0).sum().reshape(1).to(torch.int32)"}},
                 os.path.join(out, "atomic_return_prev.tlcart"))
    save_checked(tlc.compile(shared_histogram, target="sm_90a").artifact,
                 {"inputs": {"X": "randint(0, 1000)"},
                  "expect": {"H": "torch.nn.functional.one_hot((X.reshape(4, 256) % 16).long(), "
                                  "16).sum(dim=1).to(torch.int32)"}},
                 os.path.join(out, "atomic_shared_histogram.tlcart"))
    save_checked(tlc.compile(warp_sums, target="sm_90a").artifact,
                 {"expect": {"S": "X.reshape(8, 32).sum(dim=1)",
                             "Ids": "torch.stack([torch.arange(256) % 32, torch.arange(256) // 32, "
                                    "torch.arange(256) // 128]).to(torch.int32).to(X.device)"},
                  "atol": 1e-4, "rtol": 1e-5},
                 os.path.join(out, "warp_sums.tlcart"))
    lane = "torch.arange(64, device=X.device)"
    save_checked(tlc.compile(shifts, target="sm_90a").artifact,
                 {"inputs": {"X": "randint(-1000, 1000)"},
                  "expect": {"Out": f"torch.stack([X[torch.where({lane} % 16 + 3 < 16, {lane} + 3, {lane})], "
                                    f"X[torch.where({lane} % 16 >= 2, {lane} - 2, {lane})], "
                                    f"X[{lane} - {lane} % 8 + 5], X[{lane} ^ 1]])",
                             "H": f"X.half()[torch.where({lane} % 32 + 1 < 32, {lane} + 1, {lane})]"}},
                 os.path.join(out, "warp_shifts.tlcart"))
    warps = "X.reshape(3, 32)"

    def bits(rows):  # each warp's 32 lanes as a mask, given to each of its lanes
        return (f"(({rows}).long() << torch.arange(32, device=X.device)).sum(1)"
                ".repeat_interleave(32)")

    third = "(torch.arange(96, device=X.device) % 3 == 0)"
    save_checked(tlc.compile(votes_program("int64"), target="sm_90a").artifact,
                 {"inputs": {"X": "randint(-20, 200)"},
                  "expect": {"Out": f"torch.stack([({warps} > 150).any(1).repeat_interleave(32), "
                                    f"({warps} >= 0).all(1).repeat_interleave(32), "
                                    f"{bits(f'torch.fmod({warps}, 2) == 1')}, "
                                    f"torch.where({third}, {bits(third + '.reshape(3, 32)')}, "
                                    "Out[3])]).long()",
                             "Bits": bits(f"{warps} > 10")}},
                 os.path.join(out, "warp_votes.tlcart"))
    for dt, width, sliced in (("float32", 4, False), ("float32", 2, True), ("float16", 2, False),
                              ("bfloat16", 4, True)):
        save_checked(tlc.compile(_vector_adds(dt, width, sliced), target="sm_90a").artifact,
                     {"expect": {"Y": "(Y.float() + X.float().reshape(8, 8, 30).sum(0))"
                                      ".to(Y.dtype)"},
                      "atol": 1e-4 if dt == "float32" else 0.15, "rtol": 1e-4 if dt == "float32"
                      else 2e-2},
                     os.path.join(out, f"atomic_addx{width}_{dt}.tlcart"))
    # Tile adds of 16-bit floats round at each add: looser tolerances.
    tiles = [("accumulator", _accumulator_adds, "A.float() @ B.float().T", 1e-3, 0.25, cases)
             for cases in [[("float32", 128), ("float32", 127), ("float16", 100),
                            ("bfloat16", 128)]]]
    tiles += [("shared_tile", _shared_tile_adds, "3 * A.float()", 1e-4, 0.1,
               [("float32", 64), ("bfloat16", 64), ("float32", 62)]),
              ("tma", _tma_adds, "6 * A.float()", 1e-4, 0.1,
               [("float32", 128), ("float32", 100), ("bfloat16", 128)])]
    for name, program, added, atol32, atol16, cases in tiles:
        for dt, n in cases:
            wide = dt == "float32"
            save_checked(tlc.compile(program(dt, n), target="sm_90a").artifact,
                         {"expect": {"C": f"(C.float() + {added}).to(C.dtype)"},
                          "atol": atol32 if wide else atol16, "rtol": 1e-4 if wide else 2e-2},
                         os.path.join(out, f"atomic_{name}_{dt}_{n}.tlcart"))
    save_checked(tlc.compile(reverse, target="sm_90a").artifact,
                 {"expect": {"Y": "X.flip(0)"}},
                 os.path.join(out, "warp_program_barriers.tlcart"))
    for dt in ("float32", "int32"):
        save_checked(tlc.compile(extremes(dt), target="sm_90a").artifact,
                     {"expect": {"Hi": "torch.maximum(Hi, X.max(dim=0).values)",
                                 "Lo": "torch.minimum(Lo, X.min(dim=0).values)"}},
                     os.path.join(out, f"atomic_extremes_{dt}.tlcart"))
    save_checked(tlc.compile(handoff, target="sm_90a").artifact,
                 {"expect": {"Y": "X"}}, os.path.join(out, "warp_named_handoff.tlcart"))
    save_checked(tlc.compile(flags, target="sm_90a").artifact,
                 {"inputs": {"F": "zeros", "G": "zeros"},
                  "expect": {"F": "torch.full_like(F, 7)",
                             "G": "torch.arange(2, device=G.device) * -2.5",
                             "Out": "7 - torch.arange(2, device=Out.device) * 9.5"}},
                 os.path.join(out, "atomic_load_store.tlcart"))
    for dt, dim, rev in (("float32", 1, False), ("int32", 0, True), ("float16", -1, True)):
        flip = (lambda e: f"{e}.flip({dim})") if rev else (lambda e: e)
        wide = "X.float()" if dt == "float16" else "X"
        save_checked(tlc.compile(_scans(dt, dim, rev), target="sm_90a").artifact,
                     {"inputs": {"X": "randint(-50, 50)"},
                      "expect": {"S": flip(f"{flip(wide)}.cumsum({dim})") + ".to(X.dtype)",
                                 "M": flip(f"{flip('X')}.cummax({dim}).values"),
                                 "V": f"{wide}[0].cumsum(0).to(X.dtype)"},
                      "atol": 1e-3, "rtol": 1e-3},
                     os.path.join(out, f"scans_{dt}_{dim}{'_rev' if rev else ''}.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
