"""Experiment: move the overlap loop's `wgmma.wait_group 0` (softmax block) to the
top of the next iteration (after the consumer's mbarrier wait) and to the loop
exit. The stage release stays where it was (racy in principle: timing only)."""
import json, re, sys

def patch(ptx):
    L = ptx.split("\n")
    w = [i for i, l in enumerate(L) if l.strip() == "wgmma.wait_group.sync.aligned 0;"
         and any("mbarrier.arrive" in x for x in L[i:i + 6])]
    assert len(w) == 1, w
    w = w[0]
    fence = next(i for i, l in enumerate(L) if "wgmma.fence" in l)
    tw = max(i for i in range(fence) if "mbarrier.try_wait.parity" in L[i])
    end = next(i for i in range(tw, fence) if "end inline asm" in L[i])
    # loop exit: the bra.uni after the back edge in the block ending the loop
    top = max(i for i in range(tw) if re.match(r"\$L__BB\d+_\d+:", L[i]))
    toplab = L[top].strip()[:-1]
    back = next(i for i, l in enumerate(L) if re.match(r"\s*@%p\d+ bra\s+" + re.escape(toplab) + ";", l))
    exitlab = re.search(r"(\$L__BB\d+_\d+)", L[back + 1]).group(1)
    ex = next(i for i, l in enumerate(L) if l.strip() == exitlab + ":")
    ins = {end: "\twgmma.wait_group.sync.aligned 0;", ex: "\twgmma.wait_group.sync.aligned 0;"}
    out = []
    for i, l in enumerate(L):
        if i == w:
            continue
        out.append(l)
        if i in ins:
            out.append(ins[i])
    return "\n".join(out)

if __name__ == "__main__":
    for path in sys.argv[1:]:
        art = json.load(open(path))
        art["ptx"] = patch(art["ptx"])
        json.dump(art, open(path.replace(".tlcart", "_tw.tlcart"), "w"))
        print("patched", path)
