import subprocess, re, statistics, sys, collections
P="builtin.module(tile-select-mma,tile-infer-layout,tile-pipeline-loops,tile-swizzle-shared-memory,tile-allocate-shared-memory,tile-insert-barriers,tile-outline-kernels,convert-tile-to-gpu,tile-assume-param-alignment,canonicalize,cse)"
kernels=["add","gemm128_256_64_256_3","gemm128_128_32_128_3","fa","mla"]
res=collections.defaultdict(list)
for rnd in range(21):
    for k in kernels:
        for which in ("old","new"):
            out=subprocess.run([f"/tmp/ctab/tlc-opt-{which}",f"/tmp/ctab/{k}.mlir",f"--pass-pipeline={P}","--mlir-timing","--verify-each=0","-o","/dev/null"],capture_output=True,text=True)
            if out.returncode: print(which,k,out.stderr[:300]); sys.exit(1)
            rows={}
            for line in out.stderr.splitlines():
                m=re.match(r"\s*([\d.]+) \(\s*[\d.]+%\)\s+(\S.*)$",line)
                if m: rows[m.group(2).strip()]=float(m.group(1))*1e3
            for name in ("Total","TileInsertBarriers","ConvertTileToGPU","TileOutlineKernels","TilePipelineLoops","TileInferLayout","TileSelectMma","TileAllocateSharedMemory"):
                res[(k,name,which)].append(rows.get(name,float('nan')))
for k in kernels:
    for name in ("Total","ConvertTileToGPU","TileInsertBarriers","TileInferLayout"):
        o=statistics.median(res[(k,name,"old")]); n=statistics.median(res[(k,name,"new")])
        om=min(res[(k,name,"old")]); nm=min(res[(k,name,"new")])
        print(f"{k:24s} {name:20s} median old {o:7.2f} new {n:7.2f} ms {n/o if o else float('nan'):5.2f}x | min old {om:7.2f} new {nm:7.2f} ms {nm/om if om else float('nan'):5.2f}x")
