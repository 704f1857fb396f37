"""Variant 2: turn = [PV_j issue, QK_{j+1} issue]; WG0 first."""
import json, re, sys

WG = ["\tmov.u32 \t%pp0, %tid.x;", "\tshr.u32 \t%pp0, %pp0, 7;"]

def patch(ptx: str) -> str:
    lines = ptx.split("\n")
    fences = [i for i, l in enumerate(lines) if l.strip().startswith("wgmma.fence")]
    commits = [i for i, l in enumerate(lines) if l.strip().startswith("wgmma.commit_group")]
    assert len(fences) == 2 and len(commits) == 2
    entry_line = max(i for i in range(fences[0]) if lines[i].strip() == "bar.sync \t1, 256;")
    exit_line = next(i for i in range(commits[1], len(lines)) if lines[i].strip() == "bar.sync \t1, 256;")
    out = []
    declared = False
    for i, line in enumerate(lines):
        s = line.strip()
        if i == fences[1]:
            out += WG + ["\tadd.u32 \t%pp1, %pp0, 2;", "\tbar.sync \t%pp1, 256;"]
        if i == exit_line:
            out += WG + ["\tsetp.eq.u32 \t%ppq0, %pp0, 0;", "\t@%ppq0 bar.arrive \t3, 256;"]
        out.append(line)
        if not declared and s.startswith(".reg .b64"):
            out += ["\t.reg .b32 \t%pp<4>;", "\t.reg .pred \t%ppq<2>;"]
            declared = True
        if i == entry_line:
            out += WG + ["\tsetp.eq.u32 \t%ppq0, %pp0, 1;", "\t@%ppq0 bar.sync \t3, 256;"]
        if i == commits[0]:
            out += WG + ["\tsub.u32 \t%pp2, 3, %pp0;", "\tbar.arrive \t%pp2, 256;"]
    return "\n".join(out)

for path in sys.argv[1:]:
    art = json.load(open(path))
    art["ptx"] = patch(art["ptx"])
    json.dump(art, open(path.replace(".tlcart", "_pq.tlcart"), "w"))
    print("patched", path)
