// RUN: tlc-opt %s -split-input-file -tile-divide-warpgroup-roles | FileCheck %s

// MLA decode's shape, narrowed: 64 query rows, a 32-token page of a 256-wide
// latent (keys and values) plus 64 rope columns, every gemm FullCol on two
// warpgroups. The scores (64 x 32: 16 columns a warpgroup if split) go to
// warpgroup 0 whole, the latent halves to separate buffers (the scores gemm
// over them becomes two), the page loads to warpgroup 2's rings, the output's
// halves to warpgroups 0 and 1; the rescale factor and the final row sum are
// published in shared memory, P through p_ready / p_free.
// CHECK-LABEL: func.func @mla
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 384 {
// CHECK-DAG: %[[Q:.*]] = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[P:.*]] = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[S:.*]] = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
// CHECK-DAG: %[[M:.*]] = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
// CHECK-DAG: %[[CORR:.*]] = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
// CHECK-DAG: %[[L:.*]] = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
// CHECK-DAG: %[[QL:.*]] = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[QR:.*]] = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[OL:.*]] = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
// CHECK-DAG: %[[OR:.*]] = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
// CHECK-DAG: %[[KVL:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x128xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[KVR:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x128xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[KR:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[PL:.*]] = tile.alloc_fragment : memref<64x32xf16, #tile.space<fragment>>
// CHECK: %[[CORRS:.*]] = tile.alloc_shared : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[LS:.*]] = tile.alloc_shared : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[FULL:.*]] = tile.alloc_shared : memref<3xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: tile.init_barriers %[[FULL]] counts = [128, 128, 128]
// CHECK: %[[EMPTY:.*]] = tile.alloc_shared : memref<3xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: tile.init_barriers %[[EMPTY]] counts = [256, 256, 256]
// CHECK: %[[READY:.*]] = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: tile.init_barriers %[[READY]] counts = [128]
// CHECK: %[[FREE:.*]] = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: tile.init_barriers %[[FREE]] counts = [128]
// CHECK: %[[LREADY:.*]] = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: tile.init_barriers %[[LREADY]] counts = [128]

// The producer: page i into stage i % 3 once both consumers freed it.
// CHECK: tile.ws warpgroups = [2] {
// CHECK-NEXT: nvvm.setmaxregister decrease 56
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N:.*]] step
// CHECK: %[[ST:.*]] = arith.remsi %[[I]], %c3
// CHECK-DAG: %[[KVLS:.*]] = tile.stage %[[KVL]][%[[ST]]]
// CHECK-DAG: %[[KVRS:.*]] = tile.stage %[[KVR]][%[[ST]]]
// CHECK-DAG: %[[KRS:.*]] = tile.stage %[[KR]][%[[ST]]]
// CHECK: %[[PAGE:.*]] = memref.load %arg2
// CHECK: tile.barrier_wait %[[EMPTY]][%[[ST]]]
// CHECK: tile.copy %arg1[%{{.*}}, %c0{{.*}}, %c0{{.*}}] [1, 32, 128] to %[[KVLS]][%c0{{.*}}, %c0{{.*}}] [32, 128]
// CHECK: %[[RIGHT:.*]] = arith.addi %c0{{.*}}, %c128
// CHECK: tile.copy %arg1[%{{.*}}, %c0{{.*}}, %[[RIGHT]]] [1, 32, 128] to %[[KVRS]][%c0{{.*}}, %c0{{.*}}] [32, 128]
// CHECK: tile.copy %arg1[%{{.*}}, %c0{{.*}}, %c256{{.*}}] [1, 32, 64] to %[[KRS]]
// CHECK-NEXT: tile.barrier_arrive %[[FULL]][%[[ST]]]
// CHECK-NEXT: }
// CHECK-NEXT: }

// Warpgroup 0: the query's halves in, the scores whole (two gemms over the
// latent halves), the softmax, its half of the output.
// CHECK: tile.ws warpgroups = [0] {
// CHECK-NEXT: nvvm.setmaxregister increase 240
// CHECK: tile.copy %arg0[{{.*}}] [1, 64, 128] to %[[QL]]
// CHECK: tile.copy %arg0[{{.*}}] [1, 64, 128] to %[[QR]]
// CHECK: tile.copy %arg0[{{.*}}] [1, 64, 64] to %[[Q]]
// CHECK: tile.fill %[[OL]]
// CHECK: scf.for %[[I0:.*]] =
// CHECK: %[[ST0:.*]] = arith.remsi %[[I0]], %c3
// CHECK-DAG: %[[KVLS0:.*]] = tile.stage %[[KVL]][%[[ST0]]]
// CHECK-DAG: %[[KVRS0:.*]] = tile.stage %[[KVR]][%[[ST0]]]
// CHECK-DAG: %[[KRS0:.*]] = tile.stage %[[KR]][%[[ST0]]]
// CHECK: tile.barrier_wait %[[FULL]][%[[ST0]]]
// CHECK: tile.fill %[[S]]
// CHECK-NEXT: tile.gemm %[[QL]], %[[KVLS0]], %[[S]] {transpose_b}
// CHECK-NEXT: tile.gemm %[[QR]], %[[KVRS0]], %[[S]] {transpose_b}
// CHECK-NEXT: tile.gemm %[[Q]], %[[KRS0]], %[[S]] {transpose_b}
// CHECK-NEXT: tile.reduce %[[S]] to %[[M]]
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [64, 128] {
// CHECK: memref.load %[[OL]]
// CHECK: memref.load %[[CORR]]
// CHECK: memref.store %{{.*}}, %[[OL]]
// CHECK: tile.barrier_wait %[[FREE]][%c0{{.*}}]
// CHECK-NEXT: tile.copy %[[S]]{{.*}} to %[[PL]]
// CHECK-NEXT: tile.copy %[[PL]]{{.*}} to %[[P]]
// CHECK-NEXT: tile.copy %[[CORR]]{{.*}} to %[[CORRS]]
// CHECK-NEXT: tile.barrier_arrive %[[READY]]
// CHECK-NEXT: tile.gemm %[[PL]], %[[KVLS0]], %[[OL]] :
// CHECK-NEXT: tile.barrier_arrive %[[EMPTY]][%[[ST0]]]
// CHECK-NEXT: }
// CHECK-NEXT: tile.copy %[[L]]{{.*}} to %[[LS]]
// CHECK-NEXT: tile.barrier_arrive %[[LREADY]]
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [64, 128] {
// CHECK: memref.load %[[L]]
// CHECK: tile.copy %[[OL]][%c0{{.*}}, %c0{{.*}}] [64, 128] to %arg4[%{{.*}}, %{{.*}}, %c0{{.*}}] [1, 64, 128]
// CHECK-NEXT: }

// Warpgroup 1: one iteration behind, from what warpgroup 0 published.
// CHECK: tile.ws warpgroups = [1] {
// CHECK-NEXT: nvvm.setmaxregister increase 208
// CHECK: tile.fill %[[OR]]
// CHECK: scf.for %[[I1:.*]] =
// CHECK: %[[ST1:.*]] = arith.remsi %[[I1]], %c3
// CHECK: %[[KVRS1:.*]] = tile.stage %[[KVR]][%[[ST1]]]
// CHECK: tile.barrier_wait %[[READY]]
// CHECK-NEXT: tile.parallel (%{{.*}}, %{{.*}}) in [64, 128] {
// CHECK: memref.load %[[OR]]
// CHECK: memref.load %[[CORRS]]
// CHECK: memref.store %{{.*}}, %[[OR]]
// CHECK: tile.gemm %[[P]], %[[KVRS1]], %[[OR]] :
// CHECK-NEXT: tile.barrier_arrive %[[FREE]]
// CHECK-NEXT: tile.barrier_arrive %[[EMPTY]][%[[ST1]]]
// CHECK-NEXT: }
// CHECK-NEXT: tile.barrier_wait %[[LREADY]]
// CHECK: tile.parallel (%{{.*}}, %[[J:.*]]) in [64, 128] {
// CHECK-NEXT: memref.load %[[OR]][%{{.*}}, %[[J]]]
// CHECK: memref.load %[[LS]]
// The output's right half: columns 128 to 255 of the tensor, straight from
// the fragment (the staging tile is gone).
// CHECK: %[[OUTR:.*]] = arith.addi %c0{{.*}}, %c128
// CHECK-NEXT: tile.copy %[[OR]][%c0{{.*}}, %c0{{.*}}] [64, 128] to %arg4[%{{.*}}, %{{.*}}, %[[OUTR]]] [1, 64, 128]
// CHECK-NOT: tile.pipelined
// CHECK-NOT: full_col
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @mla(%q: memref<4x128x320xf16>, %cache: memref<?x32x320xf16>, %table: memref<4x16xi32>,
               %lens: memref<4xi32>, %out: memref<4x128x256xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%hb, %b) in (%c2, %c4) threads = 256 {
    %len = memref.load %lens[%b] : memref<4xi32>
    %q_latent = tile.alloc_shared : memref<64x256xf16, #gpu.address_space<workgroup>>
    %q_rope = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %kv = tile.alloc_shared : memref<32x256xf16, #gpu.address_space<workgroup>>
    %k_rope = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %p = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x256xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    %corr = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    %l = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    %h0 = arith.muli %hb, %c64 : index
    tile.copy %q[%b, %h0, %c0] [1, 64, 256] to %q_latent[%c0, %c0] [64, 256] : memref<4x128x320xf16> to memref<64x256xf16, #gpu.address_space<workgroup>>
    tile.copy %q[%b, %h0, %c256] [1, 64, 64] to %q_rope[%c0, %c0] [64, 64] : memref<4x128x320xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.fill %m, %ninf : memref<64xf32, #tile.space<fragment>>, f32
    tile.fill %l, %zero : memref<64xf32, #tile.space<fragment>>, f32
    tile.fill %o, %zero : memref<64x256xf32, #tile.space<fragment>>, f32
    %n = arith.index_cast %len : i32 to index
    %pages = arith.ceildivsi %n, %c32 : index
    tile.pipelined %i = %c0 to %pages step %c1 num_stages = 3 {
      %page32 = memref.load %table[%b, %i] : memref<4x16xi32>
      %page = arith.index_cast %page32 : i32 to index
      tile.copy %cache[%page, %c0, %c0] [1, 32, 256] to %kv[%c0, %c0] [32, 256] : memref<?x32x320xf16> to memref<32x256xf16, #gpu.address_space<workgroup>>
      tile.copy %cache[%page, %c0, %c256] [1, 32, 64] to %k_rope[%c0, %c0] [32, 64] : memref<?x32x320xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
      tile.fill %s, %zero : memref<64x32xf32, #tile.space<fragment>>, f32
      tile.gemm %q_latent, %kv, %s {policy = #tile.warp_policy<full_col>, transpose_b} : memref<64x256xf16, #gpu.address_space<workgroup>>, memref<32x256xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.gemm %q_rope, %k_rope, %s {policy = #tile.warp_policy<full_col>, transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.reduce %s to %m {dim = 1 : i64, kind = #tile.reduce_kind<max>} : memref<64x32xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
      tile.parallel (%r) in [64] {
        %x = memref.load %m[%r] : memref<64xf32, #tile.space<fragment>>
        %e = math.exp2 %x : f32
        memref.store %e, %corr[%r] : memref<64xf32, #tile.space<fragment>>
      }
      tile.parallel (%r, %j) in [64, 32] {
        %x = memref.load %s[%r, %j] : memref<64x32xf32, #tile.space<fragment>>
        %y = memref.load %m[%r] : memref<64xf32, #tile.space<fragment>>
        %d = arith.subf %x, %y : f32
        %e = math.exp2 %d : f32
        memref.store %e, %s[%r, %j] : memref<64x32xf32, #tile.space<fragment>>
      }
      tile.reduce %s to %l {dim = 1 : i64, kind = #tile.reduce_kind<sum>} : memref<64x32xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
      tile.parallel (%r, %j) in [64, 256] {
        %x = memref.load %o[%r, %j] : memref<64x256xf32, #tile.space<fragment>>
        %c = memref.load %corr[%r] : memref<64xf32, #tile.space<fragment>>
        %y = arith.mulf %x, %c : f32
        memref.store %y, %o[%r, %j] : memref<64x256xf32, #tile.space<fragment>>
      }
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.gemm %p, %kv, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x256xf16, #gpu.address_space<workgroup>>, memref<64x256xf32, #tile.space<fragment>>
    }
    %o_shared = tile.alloc_shared : memref<64x256xf16, #gpu.address_space<workgroup>>
    tile.parallel (%r, %j) in [64, 256] {
      %x = memref.load %o[%r, %j] : memref<64x256xf32, #tile.space<fragment>>
      %y = memref.load %l[%r] : memref<64xf32, #tile.space<fragment>>
      %z = arith.divf %x, %y : f32
      memref.store %z, %o[%r, %j] : memref<64x256xf32, #tile.space<fragment>>
    }
    tile.copy %o[%c0, %c0] [64, 256] to %o_shared[%c0, %c0] [64, 256] : memref<64x256xf32, #tile.space<fragment>> to memref<64x256xf16, #gpu.address_space<workgroup>>
    tile.copy %o_shared[%c0, %c0] [64, 256] to %out[%b, %h0, %c0] [1, 64, 256] : memref<64x256xf16, #gpu.address_space<workgroup>> to memref<4x128x256xf16>
  }
  return
}
}

// -----

// The same loop on one warpgroup: nothing to divide.
// CHECK-LABEL: func.func @one_warpgroup
// CHECK: threads = 128
// CHECK: tile.pipelined
// CHECK-NOT: tile.ws
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @one_warpgroup(%a: memref<64x64xf16>, %kv: memref<8x32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %p = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %kv[%i, %c0, %c0] [1, 32, 128] to %k[%c0, %c0] [32, 128] : memref<8x32x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {policy = #tile.warp_policy<full_col>, transpose_b, clear_accum} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.gemm %p, %k, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// Two warpgroups, but a column loop of the output reads shared memory
// (warpgroup 1 would read it without waiting for its writer): kept.
// CHECK-LABEL: func.func @column_loop_reads_shared
// CHECK: threads = 256
// CHECK: tile.pipelined
// CHECK-NOT: tile.ws
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @column_loop_reads_shared(%a: memref<64x64xf16>, %kv: memref<8x32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %q = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %p = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %scale = tile.alloc_shared : memref<64xf32, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %kv[%i, %c0, %c0] [1, 32, 128] to %k[%c0, %c0] [32, 128] : memref<8x32x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {policy = #tile.warp_policy<full_col>, transpose_b, clear_accum} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.parallel (%r, %j) in [64, 128] {
        %x = memref.load %o[%r, %j] : memref<64x128xf32, #tile.space<fragment>>
        %c = memref.load %scale[%r] : memref<64xf32, #gpu.address_space<workgroup>>
        %y = arith.mulf %x, %c : f32
        memref.store %y, %o[%r, %j] : memref<64x128xf32, #tile.space<fragment>>
      }
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.gemm %p, %k, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// A row vector the output's columns read is written again after P is
// published (warpgroup 1 would read the earlier value): kept.
// CHECK-LABEL: func.func @row_vector_written_late
// CHECK: threads = 256
// CHECK: tile.pipelined
// CHECK-NOT: tile.ws
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @row_vector_written_late(%a: memref<64x64xf16>, %kv: memref<8x32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %q = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %p = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %v = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %kv[%i, %c0, %c0] [1, 32, 128] to %k[%c0, %c0] [32, 128] : memref<8x32x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {policy = #tile.warp_policy<full_col>, transpose_b, clear_accum} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.reduce %s to %v {dim = 1 : i64, kind = #tile.reduce_kind<max>} : memref<64x32xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
      tile.parallel (%r, %j) in [64, 128] {
        %x = memref.load %o[%r, %j] : memref<64x128xf32, #tile.space<fragment>>
        %c = memref.load %v[%r] : memref<64xf32, #tile.space<fragment>>
        %y = arith.mulf %x, %c : f32
        memref.store %y, %o[%r, %j] : memref<64x128xf32, #tile.space<fragment>>
      }
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.fill %v, %one : memref<64xf32, #tile.space<fragment>>, f32
      tile.gemm %p, %k, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// Ampere: no wgmma or setmaxnreg, nothing divided.
// CHECK-LABEL: func.func @ampere
// CHECK: tile.pipelined
// CHECK-NOT: tile.ws
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @ampere(%a: memref<64x64xf16>, %kv: memref<8x32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %q = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %p = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %kv[%i, %c0, %c0] [1, 32, 128] to %k[%c0, %c0] [32, 128] : memref<8x32x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {policy = #tile.warp_policy<full_col>, transpose_b, clear_accum} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.gemm %p, %k, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// A column loop that reads a tensor by the output's column: warpgroup 1's
// half reads columns 64 to 127 (its local index plus 64), its accumulator by
// the local index.
// CHECK-LABEL: func.func @column_index
// CHECK: threads = 384
// CHECK: tile.ws warpgroups = [1] {
// CHECK: scf.for
// CHECK: tile.parallel (%[[R:.*]], %[[J:.*]]) in [64, 64] {
// CHECK-NEXT: %[[JG:.*]] = arith.addi %[[J]], %c64
// CHECK-NEXT: memref.load %{{.*}}[%[[R]], %[[J]]] : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: memref.load %arg2[%[[JG]]] : memref<128xf32>
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @column_index(%a: memref<64x64xf16>, %kv: memref<8x32x128xf16>, %bias: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %q = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %p = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %kv[%i, %c0, %c0] [1, 32, 128] to %k[%c0, %c0] [32, 128] : memref<8x32x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {policy = #tile.warp_policy<full_col>, transpose_b, clear_accum} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.parallel (%r, %j) in [64, 128] {
        %x = memref.load %o[%r, %j] : memref<64x128xf32, #tile.space<fragment>>
        %c = memref.load %bias[%j] : memref<128xf32>
        %y = arith.addf %x, %c : f32
        memref.store %y, %o[%r, %j] : memref<64x128xf32, #tile.space<fragment>>
      }
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.gemm %p, %k, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// The division's buffers (each ring num_stages deep, nothing sharing bytes
// in warp-specialized bodies) would not fit the target's shared memory: kept.
// CHECK-LABEL: func.func @over_budget
// CHECK: threads = 256
// CHECK: tile.pipelined
// CHECK-NOT: tile.ws
module attributes {tile.target = #tile.target<"sm_90a", shared = 32768>} {
func.func @over_budget(%a: memref<64x64xf16>, %kv: memref<8x32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %q = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %p = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %kv[%i, %c0, %c0] [1, 32, 128] to %k[%c0, %c0] [32, 128] : memref<8x32x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {policy = #tile.warp_policy<full_col>, transpose_b, clear_accum} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.gemm %p, %k, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// A loop op other than its load writes a loaded buffer (warpgroup 1 would
// read the stage unordered with warpgroup 0's write): kept.
// CHECK-LABEL: func.func @loaded_buffer_written
// CHECK: threads = 256
// CHECK: tile.pipelined
// CHECK-NOT: tile.ws
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @loaded_buffer_written(%a: memref<64x64xf16>, %kv: memref<8x32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %q = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %p = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %kv[%i, %c0, %c0] [1, 32, 128] to %k[%c0, %c0] [32, 128] : memref<8x32x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {policy = #tile.warp_policy<full_col>, transpose_b, clear_accum} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.parallel (%r) in [32] {
        memref.store %zero, %k[%r, %c0] : memref<32x128xf16, #gpu.address_space<workgroup>>
      }
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.gemm %p, %k, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// P reaches the output's gemm as a cast fragment (registers) rather than a
// shared tile: warpgroup 0 keeps using its registers, and warpgroup 1 reads a
// shared tile the pass adds, which warpgroup 0 fills at the cast; the
// fragment is gone.
// CHECK-LABEL: func.func @p_in_registers
// CHECK-NOT: memref<64x32xf16, #tile.space<fragment>>
// CHECK: %[[PS:.*]] = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK: %[[PL:.*]] = tile.alloc_fragment : memref<64x32xf16, #tile.space<fragment>>
// CHECK: tile.ws warpgroups = [0] {
// CHECK: tile.copy %{{.*}} to %[[PL]]
// CHECK-NEXT: tile.copy %[[PL]]{{.*}} to %[[PS]]
// CHECK: tile.gemm %[[PL]], %{{.*}}, %{{.*}} :
// CHECK: tile.ws warpgroups = [1] {
// CHECK: tile.gemm %[[PS]], %{{.*}}, %{{.*}} :
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @p_in_registers(%a: memref<64x64xf16>, %kv: memref<8x32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %q = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<64x32xf16, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %kv[%i, %c0, %c0] [1, 32, 128] to %k[%c0, %c0] [32, 128] : memref<8x32x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {policy = #tile.warp_policy<full_col>, transpose_b, clear_accum} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #tile.space<fragment>>
      tile.gemm %p, %k, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #tile.space<fragment>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// The query tile the scores contract over carries a swizzle of the
// program's (T.annotate_layout): its column halves could not keep it, so
// the kernel keeps the column split.
// CHECK-LABEL: func.func @annotated_split_buffer
// CHECK: threads = 256
// CHECK: tile.pipelined
// CHECK-NOT: tile.ws
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @annotated_split_buffer(%a: memref<64x64xf16>, %kv: memref<8x32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %q = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %p = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %kv[%i, %c0, %c0] [1, 32, 128] to %k[%c0, %c0] [32, 128] : memref<8x32x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {policy = #tile.warp_policy<full_col>, transpose_b, clear_accum} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
      tile.copy %s[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.gemm %p, %k, %o {policy = #tile.warp_policy<full_col>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}
