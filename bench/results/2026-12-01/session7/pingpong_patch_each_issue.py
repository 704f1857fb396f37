"""Patch FA artifacts' PTX with a ping-pong schedule of the two consumer warpgroups."""
import json, re, sys

def patch(ptx: str) -> str:
    lines = ptx.split("\n")
    out = []
    declared = False
    n_fence = n_commit = 0
    for line in lines:
        s = line.strip()
        if not declared and s.startswith(".reg .b64"):
            out.append(line)
            out.append("\t.reg .b32 \t%pp<4>;")
            out.append("\t.reg .pred \t%ppq<2>;")
            declared = True
            continue
        if s.startswith("wgmma.fence.sync.aligned"):
            out += ["\tmov.u32 \t%pp0, %tid.x;", "\tshr.u32 \t%pp0, %pp0, 7;",
                    "\tadd.u32 \t%pp1, %pp0, 2;", "\tbar.sync \t%pp1, 256;"]
            out.append(line); n_fence += 1
            continue
        out.append(line)
        if s.startswith("setmaxnreg.inc"):
            out += ["\tmov.u32 \t%pp0, %tid.x;", "\tshr.u32 \t%pp0, %pp0, 7;",
                    "\tsetp.eq.u32 \t%ppq0, %pp0, 1;", "\t@%ppq0 bar.arrive \t2, 256;"]
        if s.startswith("wgmma.commit_group"):
            out += ["\tmov.u32 \t%pp0, %tid.x;", "\tshr.u32 \t%pp0, %pp0, 7;",
                    "\tsub.u32 \t%pp2, 3, %pp0;", "\tbar.arrive \t%pp2, 256;"]
            n_commit += 1
    assert declared and n_fence == n_commit == 2, (n_fence, n_commit)
    return "\n".join(out)

for path in sys.argv[1:]:
    art = json.load(open(path))
    art["ptx"] = patch(art["ptx"])
    json.dump(art, open(path.replace(".tlcart", "_pp.tlcart"), "w"))
    print("patched", path)
