"""The PTX patches of fa_pingpong_experiment.txt: a ping-pong of FlashAttention's
two consumer warpgroups (tid / 128 = 0 or 1) on named barriers 2 and 3.

    python pingpong_patch.py each|turns ARTIFACT.tlcart ...

writes ARTIFACT_pp.tlcart ("each": every wgmma issue is a turn, WG0 first) or
ARTIFACT_pq.tlcart ("turns": a turn is [PV_j, QK_j+1] of one warpgroup; WG1
starts a turn behind, WG0 arrives once more after the loop). The PTX must hold
two wgmma groups (Q K^T, then P V) and, for "turns", the consumers' barrier 1
before and after the loop.
"""

import json
import sys

WG = ["\tmov.u32 \t%pp0, %tid.x;", "\tshr.u32 \t%pp0, %pp0, 7;"]  # %pp0 = warpgroup
SYNC_OWN = WG + ["\tadd.u32 \t%pp1, %pp0, 2;", "\tbar.sync \t%pp1, 256;"]
ARRIVE_OTHER = WG + ["\tsub.u32 \t%pp2, 3, %pp0;", "\tbar.arrive \t%pp2, 256;"]


def only(wg: int, instr: str) -> list[str]:
    return WG + [f"\tsetp.eq.u32 \t%ppq0, %pp0, {wg};", f"\t@%ppq0 {instr}"]


def plan(lines: list[str], variant: str) -> tuple[dict, dict]:
    """{line: lines to put before it}, {line: lines to put after it}."""
    find = lambda prefix: [i for i, l in enumerate(lines) if l.strip().startswith(prefix)]  # noqa: E731
    fences, commits = find("wgmma.fence"), find("wgmma.commit_group")
    assert len(fences) == 2 and len(commits) == 2, (fences, commits)
    before, after = {}, {}
    if variant == "each":
        entry = find("setmaxnreg.inc")[0]  # the consumers' start
        after[entry] = only(1, "bar.arrive \t2, 256;")
        for f in fences:
            before[f] = SYNC_OWN
        for c in commits:
            after[c] = ARRIVE_OTHER
        return before, after
    barriers = [i for i, l in enumerate(lines) if l.strip() == "bar.sync \t1, 256;"]
    entry = max(i for i in barriers if i < fences[0])
    leave = min(i for i in barriers if i > commits[1])
    after[entry] = only(1, "bar.sync \t3, 256;")
    before[fences[1]] = SYNC_OWN
    after[commits[0]] = ARRIVE_OTHER
    before[leave] = only(0, "bar.arrive \t3, 256;")
    return before, after


def patch(ptx: str, variant: str) -> str:
    lines = ptx.split("\n")
    before, after = plan(lines, variant)
    decl = next(i for i, l in enumerate(lines) if l.strip().startswith(".reg .b64"))
    after.setdefault(decl, [])
    after[decl] = ["\t.reg .b32 \t%pp<4>;", "\t.reg .pred \t%ppq<2>;"] + after[decl]
    out = []
    for i, line in enumerate(lines):
        out += before.get(i, []) + [line] + after.get(i, [])
    return "\n".join(out)


def main(variant: str, paths: list[str]) -> None:
    suffix = {"each": "_pp", "turns": "_pq"}[variant]
    for path in paths:
        art = json.load(open(path))
        art["ptx"] = patch(art["ptx"], variant)
        json.dump(art, open(path.replace(".tlcart", suffix + ".tlcart"), "w"))
        print("patched", path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
