// RUN: tlc-opt %s -split-input-file --tile-target=sm_80 -tile-select-mma -tile-infer-layout -verify-diagnostics | FileCheck %s
// RUN: tlc-opt %s -split-input-file --tile-target=sm_90a -tile-select-mma -tile-infer-layout -verify-diagnostics | FileCheck %s --check-prefix=WGMMA

// A 32x128 f32 fragment over 128 threads: four f32 (16 bytes) per run,
// consecutive threads on consecutive runs; the loop takes the same layout.
// CHECK-LABEL: func.func @blocked_f32
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>}
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [32, 128] attributes {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128
func.func @blocked_f32(%A: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [32, 128] to %f[%c0, %c0] [32, 128] : memref<64x128xf32> to memref<32x128xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [32, 128] {
      %x = memref.load %f[%i, %j] : memref<32x128xf32, #tile.space<fragment>>
      memref.store %x, %f[%i, %j] : memref<32x128xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// Copied to f16, the f32 fragment gets 8-element runs: 16 bytes of f16.
// CHECK-LABEL: func.func @narrowest_partner
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) floordiv 128
func.func @narrowest_partner(%C: memref<32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    tile.copy %f[%c0, %c0] [32, 128] to %C[%c0, %c0] [32, 128] : memref<32x128xf32, #tile.space<fragment>> to memref<32x128xf16>
  }
  return
}

// -----

// Fewer elements than threads: every element is held by 128 / 64 threads.
// CHECK-LABEL: func.func @replicated
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 mod 64)>}
func.func @replicated() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A loop that touches no fragment spreads its iterations over the threads in
// runs of consecutive elements (a 16-byte vector where the elements divide
// evenly: here 256 f32 over 128 threads, runs of 2), which the lowering moves
// as one vector each.
// CHECK-LABEL: func.func @no_fragment
// CHECK: tile.parallel (%{{.*}}) in [256] attributes {layout = #tile.layout<threads = 128, regs = 2, map = (d0, d1) -> ((d1 floordiv 2) * 256 + d0 * 2 + d1 mod 2)>}
func.func @no_fragment(%A: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    tile.parallel (%i) in [256] {
      memref.store %one, %A[%i] : memref<256xf32>
    }
  }
  return
}

// -----

// Runs need every access indexed by the last loop index in its last place:
// a transposed read keeps one element per thread per register (coalesced
// across the threads instead); so does a loop over a 2-byte tensor whose
// offset is not a known multiple of the run.
// CHECK-LABEL: func.func @no_runs
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [16, 64] attributes {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64, d0 mod 64)>}
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [16, 64] attributes {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64, d0 mod 64)>}
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [16, 64] attributes {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) floordiv 64, ((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) mod 64)>}
func.func @no_runs(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %off: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    tile.parallel (%i, %j) in [16, 64] {
      %x = memref.load %A[%j, %i] : memref<64x64xf16>
      memref.store %x, %B[%i, %j] : memref<64x64xf16>
    }
    tile.parallel (%i, %j) in [16, 64] {
      %col = arith.addi %off, %j : index
      %x = memref.load %A[%i, %col] : memref<64x64xf16>
      memref.store %x, %B[%i, %j] : memref<64x64xf16>
    }
    tile.parallel (%i, %j) in [16, 64] {
      %base = arith.muli %off, %c64 : index
      %col = arith.addi %base, %j : index
      %x = memref.load %A[%i, %col] : memref<64x64xf16>
      memref.store %x, %B[%i, %j] : memref<64x64xf16>
    }
  }
  return
}

// -----

// Runs also for a loop that writes a shared buffer and reads a value the
// whole run shares (a row's scale): 16-byte runs of f16.
// CHECK-LABEL: func.func @runs_into_shared
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [16, 64] attributes {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) floordiv 64, ((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) mod 64)>}
func.func @runs_into_shared(%A: memref<16x64xf16>, %scale: memref<16xf16>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<16x64xf16, #gpu.address_space<workgroup>>
    tile.parallel (%i, %j) in [16, 64] {
      %x = memref.load %A[%i, %j] : memref<16x64xf16>
      %r = memref.load %scale[%i] : memref<16xf16>
      %y = arith.mulf %x, %r : f16
      memref.store %y, %s[%i, %j] : memref<16x64xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// A layout the program gives is kept.
// CHECK-LABEL: func.func @given_layout
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>}
func.func @given_layout() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>} : memref<32xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @uneven() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_fragment' op has no layout for 128 threads: 1000 elements cannot be spread evenly over 128 threads (make the tile a multiple of the thread count, or a divisor of it)}}
    %f = tile.alloc_fragment : memref<1000xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A loop of no fragment whose extent the threads do not divide (129 on 128,
// 1000 fp16 in runs of 8): a padded blocked layout; the slots past the end
// have a first index past the extent.
// CHECK-LABEL: func.func @padded_loops
// CHECK: tile.parallel (%{{.*}}) in [129] attributes {layout = #tile.layout<threads = 128, regs = 2, map = (d0, d1) -> (d1 * 128 + d0)>}
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [5, 200] attributes {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) floordiv 200, ((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) mod 200)>}
func.func @padded_loops(%A: memref<129xf32>, %B: memref<5x200xf16>) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %h = arith.constant 1.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<129xf32, #gpu.address_space<workgroup>>
    tile.parallel (%i) in [129] {
      memref.store %one, %s[%i] : memref<129xf32, #gpu.address_space<workgroup>>
    }
    tile.parallel (%i, %j) in [5, 200] {
      %x = memref.load %B[%i, %j] : memref<5x200xf16>
      %y = arith.addf %x, %h : f16
      memref.store %y, %B[%i, %j] : memref<5x200xf16>
    }
  }
  return
}

// -----

// A loop that writes a fragment keeps the error: a fragment's layout holds
// each element exactly once.
func.func @uneven_loop_of_a_fragment() {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_fragment' op has no layout for 128 threads: 129 elements cannot be spread evenly over 128 threads}}
    %f = tile.alloc_fragment : memref<129xf32, #tile.space<fragment>>
    tile.parallel (%i) in [129] {
      memref.store %one, %f[%i] : memref<129xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

func.func @shifted_index() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
    tile.parallel (%i) in [128] {
      %k = arith.addi %i, %c1 : index
      // expected-error @+1 {{'memref.load' op indexes a fragment of shape 'memref<128xf32, #tile.space<fragment>>' with other than the loop's own indices; a parallel loop over a fragment must index it by its indices (i, j, ...), in any order, each dimension as long as the loop's}}
      %x = memref.load %f[%k] : memref<128xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// Two fragments placed differently in one loop: the loop takes the first
// one's layout and gets its own copy of the other in that layout, converted
// back after the loop (it only writes it, every element: no copy in).
// CHECK-LABEL: func.func @conflicting_layouts
// CHECK: %[[F:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>}
// CHECK: %[[G:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (-d0 + 31)>}
// CHECK: %[[OWN:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>}
// CHECK-NOT: tile.copy
// CHECK: tile.parallel (%[[I:.*]]) in [32]
// CHECK:   %[[X:.*]] = memref.load %[[F]][%[[I]]]
// CHECK:   memref.store %[[X]], %[[OWN]][%[[I]]]
// CHECK: tile.copy %[[OWN]][%{{.*}}] [32] to %[[G]][%{{.*}}] [32]
func.func @conflicting_layouts() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>} : memref<32xf32, #tile.space<fragment>>
    %g = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (31 - d0)>} : memref<32xf32, #tile.space<fragment>>
    tile.parallel (%i) in [32] {
      %x = memref.load %f[%i] : memref<32xf32, #tile.space<fragment>>
      memref.store %x, %g[%i] : memref<32xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// Reading the misplaced fragment (and writing it): converted in before the
// loop and out after it.
// CHECK-LABEL: func.func @read_and_write_converted
// CHECK: %[[F:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>}
// CHECK: %[[G:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (-d0 + 31)>}
// CHECK: %[[OWN:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>}
// CHECK: tile.copy %[[G]][%{{.*}}] [32] to %[[OWN]][%{{.*}}] [32]
// CHECK: tile.parallel
// CHECK:   memref.load %[[OWN]]
// CHECK:   memref.store %{{.*}}, %[[OWN]]
// CHECK: tile.copy %[[OWN]][%{{.*}}] [32] to %[[G]][%{{.*}}] [32]
func.func @read_and_write_converted() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>} : memref<32xf32, #tile.space<fragment>>
    %g = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (31 - d0)>} : memref<32xf32, #tile.space<fragment>>
    tile.parallel (%i) in [32] {
      %x = memref.load %f[%i] : memref<32xf32, #tile.space<fragment>>
      %y = memref.load %g[%i] : memref<32xf32, #tile.space<fragment>>
      %z = arith.addf %x, %y : f32
      memref.store %z, %g[%i] : memref<32xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// A gemm's accumulator takes the m16n8 tensor-core layout: 4 warps as 2x2,
// each lane holding (row l/4 [+8], cols 2(l%4) + 0/1) of each 16x8 atom.
// CHECK-LABEL: func.func @gemm_accumulator
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>}
// The epilogue loop over C takes C's layout.
// CHECK: tile.parallel {{.*}} attributes {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32
func.func @gemm_accumulator() {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [64, 64] {
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
      %y = arith.maximumf %x, %zero : f32
      memref.store %y, %c[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// A fragment with no layout of its own that a loop combines with a gemm's
// accumulator (an f32 sum of each K tile's product, the fp8 "promotion")
// takes the accumulator's layout instead of a blocked one, so the loop
// converts nothing; so does a fragment a later loop combines with it.
// CHECK-LABEL: func.func @sum_takes_accumulator_layout
// CHECK: %[[PART:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = [[MAP:.*]]>} : memref<64x64xf32
// CHECK: %[[ACC:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = [[MAP]]>} : memref<64x64xf32
// CHECK: %[[OUT:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = [[MAP]]>} : memref<64x64xf16
// CHECK-NOT: tile.copy
// CHECK: tile.parallel
// CHECK-NOT: tile.copy
// CHECK: tile.parallel
func.func @sum_takes_accumulator_layout() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %part = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %acc = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %out = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    tile.gemm %a, %b, %part {clear_accum} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [64, 64] {
      %x = memref.load %acc[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
      %y = memref.load %part[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
      %z = arith.addf %x, %y : f32
      memref.store %z, %acc[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
    }
    tile.parallel (%i, %j) in [64, 64] {
      %x = memref.load %acc[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
      %h = arith.truncf %x : f32 to f16
      memref.store %h, %out[%i, %j] : memref<64x64xf16, #tile.space<fragment>>
    }
  }
  return
}

// -----

// FullRow stacks the 4 warps along M: each warp takes 16 whole rows.
// CHECK-LABEL: func.func @full_row
// CHECK: map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 32) * 16
func.func @full_row() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<full_row>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @uncoverable() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<16x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x16xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<16x16xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op a 16x16 tile cannot be split over 4 warps with the full_row policy into m16n8 tensor-core atoms (each warp's share must be a multiple of 16 rows and 8 columns)}}
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<full_row>} : memref<16x32xf16, #gpu.address_space<workgroup>>, memref<32x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A reduction's destination holds the source layout sliced along the reduced
// dimension: here each thread holds rows 2r' + (t >= 64), replicated over
// the 64 threads of its half.
// CHECK-LABEL: func.func @reduce_destination
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64)>} : memref<8xf32
func.func @reduce_destination() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment : memref<8x256xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    tile.reduce %x to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64, clear} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
  }
  return
}

// -----

// Rows of 160 in 16-byte pieces (20 a row): the blocked layout would spread a
// row over threads no shuffle pattern combines, so the reduction's source
// takes a row-grouped layout instead: 4 threads a row (the largest power of
// two dividing 20), each holding 5 pieces of 8 of its row, 32 rows at once.
// The copied fragment keeps the same layout (16-byte loads), and the sums
// are held by the 4 threads of their row.
// CHECK-LABEL: func.func @reduce_rows_grouped
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 40, map = (d0, d1) -> (d0 floordiv 4, ((d1 floordiv 8) * 4 + d0 mod 4) * 8 + d1 mod 8)>} : memref<32x160xf16
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 40, map = (d0, d1) -> (d0 floordiv 4, ((d1 floordiv 8) * 4 + d0 mod 4) * 8 + d1 mod 8)>} : memref<32x160xf32
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 floordiv 4)>} : memref<32xf32
func.func @reduce_rows_grouped(%X: memref<32x160xf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment : memref<32x160xf16, #tile.space<fragment>>
    %sq = tile.alloc_fragment : memref<32x160xf32, #tile.space<fragment>>
    %s = tile.alloc_fragment : memref<32xf32, #tile.space<fragment>>
    tile.copy %X[%c0, %c0] [32, 160] to %x[%c0, %c0] [32, 160] : memref<32x160xf16> to memref<32x160xf16, #tile.space<fragment>>
    tile.copy %x[%c0, %c0] [32, 160] to %sq[%c0, %c0] [32, 160] : memref<32x160xf16, #tile.space<fragment>> to memref<32x160xf32, #tile.space<fragment>>
    tile.reduce %sq to %s {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear} : memref<32x160xf32, #tile.space<fragment>> to memref<32xf32, #tile.space<fragment>>
  }
  return
}

// -----

// 24 rows of 160 f32 (40 pieces of 4 a row) cannot be dealt out to 16 groups
// of 8 threads either: the reduction names the layout it cannot combine.
func.func @reduce_rows_uneven() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment : memref<24x160xf32, #tile.space<fragment>>
    %s = tile.alloc_fragment : memref<24xf32, #tile.space<fragment>>
    // expected-error @+1 {{reductions do not combine}}
    tile.reduce %x to %s {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear} : memref<24x160xf32, #tile.space<fragment>> to memref<24xf32, #tile.space<fragment>>
  }
  return
}

// -----

// The row max of a gemm accumulator: rows lane/4 + 8 r' of the warp's 32,
// four registers (2 atoms x 2 half-rows), held by 4 lanes x 2 warps each.
// CHECK-LABEL: func.func @reduce_accumulator
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 * 8 + ((d0 floordiv 32) floordiv 2) * 32 + {{.*}} + (d0 mod 32) floordiv 4 {{.*}})>} : memref<64xf32
func.func @reduce_accumulator() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.reduce %c to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A in registers takes the m16k16 A-operand layout (8 registers per atom);
// the fp32 scores it is cast from share its elements' places (FullRow: each
// warp holds whole rows), so the copy between them takes that layout too.
// CHECK-LABEL: func.func @a_in_registers
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 32) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8,
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 32) * 16 + (d0 mod 32) floordiv 4 + (((d1 mod 8) floordiv 2) mod 2) * 8,
func.func @a_in_registers() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %s {policy = #tile.warp_policy<full_row>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.copy %s[%c0, %c0] [64, 64] to %p[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
    tile.gemm %p, %v, %o {policy = #tile.warp_policy<full_row>} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A fragment first written in a loop takes the loop's layout (here that of
// the row vector the loop also reads), as attention's scores_scale does.
// CHECK-LABEL: func.func @adopts_loop_layout
// CHECK: %[[M:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64)>} : memref<8xf32
// CHECK: %[[S:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64)>} : memref<8xf32
func.func @adopts_loop_layout() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment : memref<8x256xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    %s = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    tile.reduce %x to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64, clear} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
    tile.parallel (%i) in [8] {
      %v = memref.load %m[%i] : memref<8xf32, #tile.space<fragment>>
      memref.store %v, %s[%i] : memref<8xf32, #tile.space<fragment>>
    }
    tile.parallel (%i, %j) in [8, 256] {
      %v = memref.load %x[%i, %j] : memref<8x256xf32, #tile.space<fragment>>
      %r = memref.load %s[%i] : memref<8xf32, #tile.space<fragment>>
      %d = arith.subf %v, %r : f32
      memref.store %d, %x[%i, %j] : memref<8x256xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// Loops that index a placed fragment are placed first: %l, scaled in a loop
// of its own before anything places it, takes the layout of the later loop
// that adds the reduction's row sums to it, not a blocked default both other
// loops would then convert (no tile.copy between layouts).
// CHECK-LABEL: func.func @placed_loops_first
// CHECK: %[[L:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64)>} : memref<8xf32
// CHECK: %[[LB:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64)>} : memref<8xf32
// CHECK-NOT: tile.copy
func.func @placed_loops_first(%scale: memref<8xf32, #gpu.address_space<workgroup>>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment : memref<8x256xf32, #tile.space<fragment>>
    %l = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    %lb = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    tile.parallel (%i) in [8] {
      %v = memref.load %l[%i] : memref<8xf32, #tile.space<fragment>>
      %s = memref.load %scale[%i] : memref<8xf32, #gpu.address_space<workgroup>>
      %p = arith.mulf %v, %s : f32
      memref.store %p, %l[%i] : memref<8xf32, #tile.space<fragment>>
    }
    tile.reduce %x to %lb {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
    tile.parallel (%i) in [8] {
      %v = memref.load %l[%i] : memref<8xf32, #tile.space<fragment>>
      %b = memref.load %lb[%i] : memref<8xf32, #tile.space<fragment>>
      %a = arith.addf %v, %b : f32
      memref.store %a, %l[%i] : memref<8xf32, #tile.space<fragment>>
    }
    tile.parallel (%i, %j) in [8, 256] {
      %v = memref.load %x[%i, %j] : memref<8x256xf32, #tile.space<fragment>>
      %r = memref.load %l[%i] : memref<8xf32, #tile.space<fragment>>
      %d = arith.divf %v, %r : f32
      memref.store %d, %x[%i, %j] : memref<8x256xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// A gemm wgmma can run (A M x K and B N x K in shared memory, f16, 128-byte
// K rows, M = 16 x warps): with wgmma each warp holds 16 rows of all 128
// columns, the warpgroup's m64n128 accumulator fragment; without it the
// Square policy splits 4 warps as 1 x 4 (64 x 32 each).
// CHECK-LABEL: func.func @wgmma_accumulator
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d0 floordiv 32) floordiv 4) * 64 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 4) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>}
// WGMMA-LABEL: func.func @wgmma_accumulator
// WGMMA: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>}
func.func @wgmma_accumulator() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
  }
  return
}

// -----

// An annotation (T.Fragment) that holds the accumulator's elements in the same
// registers, written another way, is rewritten as the tensor-core layout, so
// the gemm and its users are lowered as for an unannotated C.
// CHECK-LABEL: func.func @annotated_accumulator
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 4, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 4) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, (d0 mod 4) * 2 + d1 mod 2)>}
func.func @annotated_accumulator() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %a = tile.alloc_shared : memref<16x16xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<16x8xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 4, map = (d0, d1) -> (d0 floordiv 4 + ((d1 floordiv 2) mod 2) * 8, d0 * 2 - (d0 floordiv 4) * 8 + d1 mod 2)>} : memref<16x8xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x8xf16, #gpu.address_space<workgroup>>, memref<16x8xf32, #tile.space<fragment>>
  }
  return
}

// -----

// 64 rows over two warpgroups (FullCol): with wgmma the warpgroups sit side
// by side, warpgroup g holding columns 64 g .. 64 g + 63 of all 64 rows (its
// four warps 16 rows each), so a row's maximum combines both warpgroups;
// without wgmma FullCol gives each of the 8 warps 16 columns.
// CHECK-LABEL: func.func @wgmma_warpgroups_along_n
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 256, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 8) * 64 + (d1 floordiv 8) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 8) * 16 + ((d1 floordiv 4) mod 2) * 8 + (d0 mod 4) * 2 + d1 mod 2)>}
// WGMMA-LABEL: func.func @wgmma_warpgroups_along_n
// WGMMA: tile.alloc_fragment {layout = #tile.layout<threads = 256, regs = 32, map = (d0, d1) -> (((((d0 floordiv 32) floordiv 4) floordiv 2) * 4 + (d0 floordiv 32) mod 4) * 16 + (d1 floordiv 32) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, (((d0 floordiv 32) floordiv 4) mod 2) * 64 + ((d1 floordiv 4) mod 8) * 8 + (d0 mod 4) * 2 + d1 mod 2)>}
// WGMMA: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 2, a = shared, depth = 0>
func.func @wgmma_warpgroups_along_n() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b, policy = #tile.warp_policy<full_col>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    tile.reduce %c to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64, clear} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// B stored K x N (N-major) with N a multiple of 64: wgmma reads it as
// 64-column blocks, so with wgmma its buffer is marked to be stored so; the
// accumulator takes the warpgroup layout. Without wgmma: neither.
// CHECK-LABEL: func.func @wgmma_n_major_b
// CHECK-NOT: column_block
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d0 floordiv 32) floordiv 4) * 64
// WGMMA-LABEL: func.func @wgmma_n_major_b
// WGMMA: tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16
// WGMMA: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16
func.func @wgmma_n_major_b() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
  }
  return
}

// -----

// N = 96 is not whole 64-column blocks: mma.sync in both runs.
// CHECK-LABEL: func.func @no_wgmma_for_partial_blocks
// WGMMA-LABEL: func.func @no_wgmma_for_partial_blocks
// WGMMA-NOT: column_block
// WGMMA: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 48, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32
func.func @no_wgmma_for_partial_blocks() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x96xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x96xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x96xf16, #gpu.address_space<workgroup>>, memref<64x96xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A fragment that alone needs more registers than a thread has is rejected
// with the numbers (it would spill whole, and take minutes to compile).
func.func @too_many_registers() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_fragment' op this fragment needs 8192 registers per thread, more than the 255 a thread has; use smaller tiles or more threads}}
    %x = tile.alloc_fragment : memref<1024x1024xf32, #tile.space<fragment>>
  }
  return
}

// -----

// 200 registers per thread fit a thread but not 1024 threads (204800 > 65536).
func.func @block_registers() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 1024 {
    // expected-error @+1 {{'tile.alloc_local' op this local buffer needs 200 registers per thread x 1024 threads = 204800, more than the 65536 registers of a block; use smaller tiles or fewer threads}}
    %x = tile.alloc_local : memref<200xf32, #tile.space<local>>
  }
  return
}

// -----

// A row vector placed by a reduction of a narrow tile (64 x 8: each row in
// two threads) and read by a loop over a wide one (64 x 256, another layout)
// gets a copy for the loop in the loop's layout sliced along j, converted
// before the loop (a fragment copy between layouts, through shared memory).
// CHECK-LABEL: func.func @row_vector_converted
// CHECK: %[[MX:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 floordiv 2)>} : memref<64xf32
// CHECK: %[[OWN:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64)>} : memref<64xf32
// CHECK: tile.reduce %{{.*}} to %[[MX]]
// CHECK: tile.copy %[[MX]][%{{.*}}] [64] to %[[OWN]][%{{.*}}] [64]
// CHECK: tile.parallel
// CHECK: memref.load %[[OWN]][%{{.*}}]
// WGMMA-LABEL: func.func @row_vector_converted
func.func @row_vector_converted(%A: memref<64x8xf32>, %B: memref<64x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_fragment : memref<64x8xf32, #tile.space<fragment>>
    %b = tile.alloc_fragment : memref<64x256xf32, #tile.space<fragment>>
    %mx = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 8] to %a[%c0, %c0] [64, 8] : memref<64x8xf32> to memref<64x8xf32, #tile.space<fragment>>
    tile.copy %B[%c0, %c0] [64, 256] to %b[%c0, %c0] [64, 256] : memref<64x256xf32> to memref<64x256xf32, #tile.space<fragment>>
    tile.reduce %a to %mx {kind = #tile.reduce_kind<max>, dim = 1 : i64, clear} : memref<64x8xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [64, 256] {
      %x = memref.load %b[%i, %j] : memref<64x256xf32, #tile.space<fragment>>
      %m = memref.load %mx[%i] : memref<64xf32, #tile.space<fragment>>
      %y = arith.mulf %x, %m : f32
      memref.store %y, %b[%i, %j] : memref<64x256xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// One loop reading a placed vector both as v[i] and as v[j] would need two
// converted copies of it: an error asking to split the loop.
func.func @row_vector_two_dims(%A: memref<64x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_fragment : memref<64x8xf32, #tile.space<fragment>>
    %b = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-note @+1 {{the fragment is allocated here}}
    %v = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 8] to %a[%c0, %c0] [64, 8] : memref<64x8xf32> to memref<64x8xf32, #tile.space<fragment>>
    tile.reduce %a to %v {kind = #tile.reduce_kind<max>, dim = 1 : i64, clear} : memref<64x8xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [64, 64] {
      %x = memref.load %v[%i] : memref<64xf32, #tile.space<fragment>>
      // expected-error @+1 {{reads or writes a row fragment along two different dimensions of one loop; split the loop}}
      %y = memref.load %v[%j] : memref<64xf32, #tile.space<fragment>>
      %z = arith.addf %x, %y : f32
      memref.store %z, %b[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// A reduction of a shared buffer reduces a fragment copy of it; one into a
// shared buffer that accumulates (no clear) loads it into a fragment first
// and stores the fragment back after.
// CHECK-LABEL: func.func @shared_reduction
// CHECK: %[[DF:.*]] = tile.alloc_fragment {layout = {{.*}}} : memref<128xf32, #tile.space<fragment>>
// CHECK: %[[SF:.*]] = tile.alloc_fragment {layout = {{.*}}} : memref<64x128xf32, #tile.space<fragment>>
// CHECK: %[[S:.*]] = tile.alloc_shared : memref<64x128xf32
// CHECK: %[[D:.*]] = tile.alloc_shared : memref<128xf32
// CHECK: tile.copy %[[S]][{{.*}}] [64, 128] to %[[SF]]
// CHECK: tile.copy %[[D]][{{.*}}] [128] to %[[DF]]
// CHECK-NEXT: tile.reduce %[[SF]] to %[[DF]] {dim = 0 : i64, kind = #tile.reduce_kind<sum>}
// CHECK: tile.copy %[[DF]][{{.*}}] [128] to %[[D]]
// WGMMA-LABEL: func.func @shared_reduction
func.func @shared_reduction() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x128xf32, #gpu.address_space<workgroup>>
    %d = tile.alloc_shared : memref<128xf32, #gpu.address_space<workgroup>>
    tile.reduce %s to %d {kind = #tile.reduce_kind<sum>, dim = 0 : i64} : memref<64x128xf32, #gpu.address_space<workgroup>> to memref<128xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A reducer's partials (tile.reducer: thread t holds row t) and a fragment
// every thread holds whole are accessed at indices that are not the loop's;
// neither places the loop nor is converted: the loop takes %a's layout, and
// the finalize's destination (%r) gets the partials' layout reduced along
// the threads (every thread holding all 4 elements).
// CHECK-LABEL: func.func @reducer_partials
// CHECK: %[[R:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1)>} : memref<4xf32
// CHECK: %[[P:.*]] = tile.alloc_fragment {{.*}}tile.reducer
// CHECK: tile.copy %arg0
// CHECK-NEXT: tile.fill %[[P]]
// CHECK-NEXT: tile.parallel (%{{.*}}, %{{.*}}) in [4, 128] attributes {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[P]][%c0, %{{.*}}]
// CHECK: tile.reduce %[[P]] to %[[R]] {clear, dim = 0 : i64, kind = #tile.reduce_kind<sum>}
// CHECK-NEXT: tile.parallel (%{{.*}}) in [128] attributes {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d1 * 128 + d0)>}
// CHECK-NEXT: memref.load %[[R]][%c3]
func.func @reducer_partials(%A: memref<4x128xf32>, %B: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_fragment : memref<4x128xf32, #tile.space<fragment>>
    %r = tile.alloc_fragment : memref<4xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d0, d1)>, tile.reducer} : memref<128x4xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [4, 128] to %a[%c0, %c0] [4, 128] : memref<4x128xf32> to memref<4x128xf32, #tile.space<fragment>>
    tile.fill %p, %zero : memref<128x4xf32, #tile.space<fragment>>, f32
    tile.parallel (%i, %j) in [4, 128] {
      %x = memref.load %a[%i, %j] : memref<4x128xf32, #tile.space<fragment>>
      %w = memref.atomic_rmw addf %x, %p[%c0, %i] : (f32, memref<128x4xf32, #tile.space<fragment>>) -> f32
    }
    tile.reduce %p to %r {kind = #tile.reduce_kind<sum>, dim = 0 : i64, clear} : memref<128x4xf32, #tile.space<fragment>> to memref<4xf32, #tile.space<fragment>>
    tile.parallel (%k) in [128] {
      %s = memref.load %r[%c3] : memref<4xf32, #tile.space<fragment>>
      memref.store %s, %B[%k] : memref<128xf32>
    }
  }
  return
}

// -----

// In a 256-thread kernel, fragments a tile.ws body uses are spread over its
// warpgroup's 128 threads, and its gemm partitions 4 warps (on sm_90a one
// wgmma warpgroup with two m64 row blocks).
// CHECK-LABEL: func.func @warp_group_layouts
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128,
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128,
// CHECK: tile.gemm {{.*}}warps_m = 2, warps_n = 2
// WGMMA-LABEL: func.func @warp_group_layouts
// WGMMA: tile.gemm {{.*}}kind = wgmma, m = 64, n = 128{{.*}}warps_m = 4, warps_n = 1
func.func @warp_group_layouts(%A: memref<128x64xf16>, %C: memref<128x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_fragment : memref<128x64xf16, #tile.space<fragment>>
    %acc = tile.alloc_fragment : memref<128x128xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
    tile.ws warpgroups = [1] {
      tile.copy %A[%c0, %c0] [128, 64] to %v[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #tile.space<fragment>>
      tile.gemm %a, %b, %acc : memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #tile.space<fragment>>
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tile.space<fragment>> to memref<128x128xf32>
    }
  }
  return
}

// -----

// A view of a fragment holds the allocation's registers: a loop over the
// view takes the allocation's layout seen through the reshape (each 32-wide
// group's column is the flat position mod 32), a reduction over it slices
// that layout, and nothing is converted.
// CHECK-LABEL: func.func @view_of_a_placed_fragment
// CHECK: %[[F:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} : memref<64x128xf32
// CHECK: %[[H:.*]] = tile.view %[[F]] : memref<64x128xf32, #tile.space<fragment>> to memref<64x4x32xf32, #tile.space<fragment>>
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16,
// CHECK-NOT: #tile.space<fragment>> to memref<{{[0-9x]+}}xf32, #tile.space<fragment>>
// CHECK: tile.parallel ({{.*}}) in [64, 4, 32] attributes {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ({{.*}}, {{.*}}, (d0 * 4 + d1 + (d1 floordiv 4) * 508) mod 32)>}
// CHECK-NEXT: memref.load %[[H]]
// CHECK: tile.reduce %[[H]]
func.func @view_of_a_placed_fragment(%A: memref<64x128xf32>, %S: memref<64x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %h = tile.view %f : memref<64x128xf32, #tile.space<fragment>> to memref<64x4x32xf32, #tile.space<fragment>>
    %s = tile.alloc_fragment : memref<64x4xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 128] to %f[%c0, %c0] [64, 128] : memref<64x128xf32> to memref<64x128xf32, #tile.space<fragment>>
    tile.parallel (%i, %g, %k) in [64, 4, 32] {
      %x = memref.load %h[%i, %g, %k] : memref<64x4x32xf32, #tile.space<fragment>>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %h[%i, %g, %k] : memref<64x4x32xf32, #tile.space<fragment>>
    }
    tile.reduce %h to %s {dim = 2 : i64, kind = #tile.reduce_kind<sum>, clear} : memref<64x4x32xf32, #tile.space<fragment>> to memref<64x4xf32, #tile.space<fragment>>
    tile.copy %s[%c0, %c0] [64, 4] to %S[%c0, %c0] [64, 4] : memref<64x4xf32, #tile.space<fragment>> to memref<64x4xf32>
  }
  return
}

// -----

// A loop indexing a fragment with its indices swapped (f[i, j] in a loop
// over (j, i)) takes its layout with the dimensions swapped; the loop's
// other fragment, placed for its own copy, gets a converted copy (a
// transpose moves elements between threads).
// CHECK-LABEL: func.func @transposed_indices
// CHECK: %[[F:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} : memref<64x128xf32
// CHECK: %[[G:.*]] = tile.alloc_fragment {layout = {{.*}}} : memref<128x64xf32
// CHECK: %[[OWN:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128)>} : memref<128x64xf32
// CHECK: tile.parallel (%[[J:.*]], %[[I:.*]]) in [128, 64] attributes {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128)>}
// CHECK-NEXT: memref.load %[[F]][%[[I]], %[[J]]]
// CHECK-NEXT: memref.store {{.*}}, %[[OWN]][%[[J]], %[[I]]]
// CHECK: tile.copy %[[OWN]]{{.*}} to %[[G]]

func.func @transposed_indices(%A: memref<64x128xf32>, %B: memref<128x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %g = tile.alloc_fragment : memref<128x64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 128] to %f[%c0, %c0] [64, 128] : memref<64x128xf32> to memref<64x128xf32, #tile.space<fragment>>
    tile.parallel (%j, %i) in [128, 64] {
      %x = memref.load %f[%i, %j] : memref<64x128xf32, #tile.space<fragment>>
      memref.store %x, %g[%j, %i] : memref<128x64xf32, #tile.space<fragment>>
    }
    tile.copy %g[%c0, %c0] [128, 64] to %B[%c0, %c0] [128, 64] : memref<128x64xf32, #tile.space<fragment>> to memref<128x64xf32>
  }
  return
}

// -----

// A row vector two dimensions short of its loop (c[i] in a loop over
// (i, g, k)) holds the rows of the loop's elements: the loop's layout sliced
// along both (thread t's registers r hold rows 4r + t / 32), no conversion.
// CHECK-LABEL: func.func @row_vector_two_dims_short
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (d1 * 4 + d0 floordiv 32)>} : memref<64xf32
// CHECK-NOT: tile.alloc_fragment
// CHECK: tile.parallel
func.func @row_vector_two_dims_short(%A: memref<64x128xf32>, %C: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %h = tile.view %f : memref<64x128xf32, #tile.space<fragment>> to memref<64x4x32xf32, #tile.space<fragment>>
    %c = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 128] to %f[%c0, %c0] [64, 128] : memref<64x128xf32> to memref<64x128xf32, #tile.space<fragment>>
    tile.parallel (%i, %g, %k) in [64, 4, 32] {
      %x = memref.load %h[%i, %g, %k] : memref<64x4x32xf32, #tile.space<fragment>>
      %s = memref.load %c[%i] : memref<64xf32, #tile.space<fragment>>
      %y = arith.mulf %x, %s : f32
      memref.store %y, %h[%i, %g, %k] : memref<64x4x32xf32, #tile.space<fragment>>
    }
    tile.copy %f[%c0, %c0] [64, 128] to %A[%c0, %c0] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
  }
  return
}

// -----

// A fragment of more dimensions than its loop, indexed by a value the loop
// does not change in the extra one (f[k, j] in a loop over j): each thread
// holds, for its column, all 8 rows (register r: row r). The loop places f
// (no blocked default first, so no conversion).
// CHECK-LABEL: func.func @outer_indexed
// CHECK: %[[F:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (d1 mod 8, d0)>} : memref<8x128xf32
// CHECK-NOT: tile.copy %[[F]]
// CHECK: tile.parallel
// CHECK-NEXT: memref.load %[[F]][%arg1, %{{.*}}]
func.func @outer_indexed(%A: memref<128xf32>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<8x128xf32, #tile.space<fragment>>
    %t = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
    tile.copy %A[%c0] [128] to %t[%c0] [128] : memref<128xf32> to memref<128xf32, #tile.space<fragment>>
    tile.parallel (%j) in [128] {
      %x = memref.load %f[%k, %j] : memref<8x128xf32, #tile.space<fragment>>
      %y = memref.load %t[%j] : memref<128xf32, #tile.space<fragment>>
      %z = arith.addf %x, %y : f32
      memref.store %z, %t[%j] : memref<128xf32, #tile.space<fragment>>
    }
    tile.copy %t[%c0] [128] to %A[%c0] [128] : memref<128xf32, #tile.space<fragment>> to memref<128xf32>
  }
  return
}

// -----

// The same with a constant outer index defined inside the loop (an unrolled
// loop's index, f[1, j]): a constant is the loop's no more than a value
// defined outside it.
// CHECK-LABEL: func.func @outer_indexed_constant
// CHECK: %[[F:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (d1 mod 8, d0)>} : memref<8x128xf32
// CHECK: tile.parallel
// CHECK: memref.load %[[F]][%c1{{.*}}, %arg2]
func.func @outer_indexed_constant(%A: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<8x128xf32, #tile.space<fragment>>
    %t = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
    tile.copy %A[%c0] [128] to %t[%c0] [128] : memref<128xf32> to memref<128xf32, #tile.space<fragment>>
    tile.parallel (%j) in [128] {
      %k = arith.constant 1 : index
      %x = memref.load %f[%k, %j] : memref<8x128xf32, #tile.space<fragment>>
      %y = memref.load %t[%j] : memref<128xf32, #tile.space<fragment>>
      %z = arith.addf %x, %y : f32
      memref.store %z, %t[%j] : memref<128xf32, #tile.space<fragment>>
    }
    tile.copy %t[%c0] [128] to %A[%c0] [128] : memref<128xf32, #tile.space<fragment>> to memref<128xf32>
  }
  return
}

// -----

// Outer indices and left-out loop dimensions together: in a loop over (i, j)
// of 4 x 128 whose body loops over k, w[k, i] leaves out j and x[k, j]
// leaves out i. Each thread holds, for the elements the loop gives it, the
// whole range of k: w's row t / 32 for each k (register k), x's four columns
// 4t..4t+3 (mod 128) for each k (register 4k + column). Both are placed by
// the loop, so their copies from global memory need no conversion.
// CHECK-LABEL: func.func @outer_and_dropped
// CHECK: %[[W:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 mod 4, d0 floordiv 32)>} : memref<4x4xf32
// CHECK: %[[X:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> ((d1 floordiv 4) mod 4, (d0 * 4 + d1 mod 4
// CHECK: tile.copy %{{.*}} to %[[W]]
// CHECK: tile.copy %{{.*}} to %[[X]]
// CHECK-NEXT: tile.parallel
// CHECK: scf.for %[[K:.*]] =
// CHECK-NEXT: memref.load %[[W]][%[[K]], %arg
// CHECK-NEXT: memref.load %[[X]][%[[K]], %arg
func.func @outer_and_dropped(%W: memref<4x4xf32>, %X: memref<4x128xf32>, %T: memref<4x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %w = tile.alloc_fragment : memref<4x4xf32, #tile.space<fragment>>
    %x = tile.alloc_fragment : memref<4x128xf32, #tile.space<fragment>>
    %t = tile.alloc_fragment : memref<4x128xf32, #tile.space<fragment>>
    tile.copy %W[%c0, %c0] [4, 4] to %w[%c0, %c0] [4, 4] : memref<4x4xf32> to memref<4x4xf32, #tile.space<fragment>>
    tile.copy %X[%c0, %c0] [4, 128] to %x[%c0, %c0] [4, 128] : memref<4x128xf32> to memref<4x128xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [4, 128] {
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %t[%i, %j] : memref<4x128xf32, #tile.space<fragment>>
      scf.for %k = %c0 to %c4 step %c1 {
        %a = memref.load %w[%k, %i] : memref<4x4xf32, #tile.space<fragment>>
        %b = memref.load %x[%k, %j] : memref<4x128xf32, #tile.space<fragment>>
        %s = memref.load %t[%i, %j] : memref<4x128xf32, #tile.space<fragment>>
        %p = arith.mulf %a, %b : f32
        %q = arith.addf %s, %p : f32
        memref.store %q, %t[%i, %j] : memref<4x128xf32, #tile.space<fragment>>
      }
    }
    tile.copy %t[%c0, %c0] [4, 128] to %T[%c0, %c0] [4, 128] : memref<4x128xf32, #tile.space<fragment>> to memref<4x128xf32>
  }
  return
}

// -----

// A serial loop inside the parallel one whose bound is read at run time in
// the body (it depends on the loop's index) does not give an outer index:
// w[k, i] is then indexed by a value the loop changes, which is an error.
func.func @outer_index_varies(%W: memref<4x4xf32>, %T: memref<4x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %w = tile.alloc_fragment : memref<4x4xf32, #tile.space<fragment>>
    %t = tile.alloc_fragment : memref<4x128xf32, #tile.space<fragment>>
    tile.copy %W[%c0, %c0] [4, 4] to %w[%c0, %c0] [4, 4] : memref<4x4xf32> to memref<4x4xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [4, 128] {
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %t[%i, %j] : memref<4x128xf32, #tile.space<fragment>>
      scf.for %k = %c0 to %i step %c1 {
        // expected-error @+1 {{with other than the loop's own indices}}
        %a = memref.load %w[%k, %i] : memref<4x4xf32, #tile.space<fragment>>
        %s = memref.load %t[%i, %j] : memref<4x128xf32, #tile.space<fragment>>
        %q = arith.addf %s, %a : f32
        memref.store %q, %t[%i, %j] : memref<4x128xf32, #tile.space<fragment>>
      }
    }
    tile.copy %t[%c0, %c0] [4, 128] to %T[%c0, %c0] [4, 128] : memref<4x128xf32, #tile.space<fragment>> to memref<4x128xf32>
  }
  return
}

// -----

// x[i, kk * 4 + j] in a loop over (i, j) of 32 x 4 inside a serial loop over
// kk: x's columns are seen as (kk, j), 64 x 4, kk outer. Each thread holds
// its row's column j in every chunk: register kk, row t / 4, column
// 4 kk + (t mod 4) (the map below, not simplified by MLIR). The loop places
// x: no conversion copy (a tile.copy from another fragment) before it.
// CHECK-LABEL: func.func @outer_split_index
// CHECK: %[[X:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 + d1 * 4 + (d0 floordiv 4) * 252) floordiv 256 - d1 floordiv 64,
// CHECK-SAME: memref<32x256xf32
// CHECK-NOT: tile.copy %{{[0-9]+}}[
// CHECK: tile.parallel
func.func @outer_split_index(%X: memref<32x256xf32>, %S: memref<32x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment : memref<32x256xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<32x4xf32, #tile.space<fragment>>
    tile.copy %X[%c0, %c0] [32, 256] to %x[%c0, %c0] [32, 256] : memref<32x256xf32> to memref<32x256xf32, #tile.space<fragment>>
    %zero = arith.constant 0.0 : f32
    tile.fill %p, %zero : memref<32x4xf32, #tile.space<fragment>>, f32
    scf.for %kk = %c0 to %c64 step %c1 {
      tile.parallel (%i, %j) in [32, 4] {
        %n = arith.constant 4 : index
        %base = arith.muli %kk, %n : index
        %col = arith.addi %base, %j : index
        %v = memref.load %x[%i, %col] : memref<32x256xf32, #tile.space<fragment>>
        %s = memref.load %p[%i, %j] : memref<32x4xf32, #tile.space<fragment>>
        %q = arith.addf %s, %v : f32
        memref.store %q, %p[%i, %j] : memref<32x4xf32, #tile.space<fragment>>
      }
    }
    tile.copy %p[%c0, %c0] [32, 4] to %S[%c0, %c0] [32, 4] : memref<32x4xf32, #tile.space<fragment>> to memref<32x4xf32>
  }
  return
}

// -----

// x placed otherwise (its own blocked layout, set here) and only read in a
// loop inside a serial loop that does not write it: the converted copy the
// loop reads is made once, before the serial loop, not once per chunk.
// CHECK-LABEL: func.func @conversion_hoisted
// CHECK: %[[X:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (d0 floordiv 4, (d0 mod 4) * 64 + d1)>}
// CHECK: %[[OWN:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64
// CHECK: tile.copy %[[X]]{{.*}} to %[[OWN]]
// CHECK-NEXT: scf.for
// CHECK: tile.parallel
// CHECK: memref.load %[[OWN]]
func.func @conversion_hoisted(%X: memref<32x256xf32>, %S: memref<32x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (d0 floordiv 4, (d0 mod 4) * 64 + d1)>} : memref<32x256xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<32x4xf32, #tile.space<fragment>>
    tile.copy %X[%c0, %c0] [32, 256] to %x[%c0, %c0] [32, 256] : memref<32x256xf32> to memref<32x256xf32, #tile.space<fragment>>
    %zero = arith.constant 0.0 : f32
    tile.fill %p, %zero : memref<32x4xf32, #tile.space<fragment>>, f32
    scf.for %kk = %c0 to %c64 step %c1 {
      tile.parallel (%i, %j) in [32, 4] {
        %n = arith.constant 4 : index
        %base = arith.muli %kk, %n : index
        %col = arith.addi %base, %j : index
        %v = memref.load %x[%i, %col] : memref<32x256xf32, #tile.space<fragment>>
        %s = memref.load %p[%i, %j] : memref<32x4xf32, #tile.space<fragment>>
        %q = arith.addf %s, %v : f32
        memref.store %q, %p[%i, %j] : memref<32x4xf32, #tile.space<fragment>>
      }
    }
    tile.copy %p[%c0, %c0] [32, 4] to %S[%c0, %c0] [32, 4] : memref<32x4xf32, #tile.space<fragment>> to memref<32x4xf32>
  }
  return
}

// -----

// Two reductions into one row vector from tiles of different layouts: the
// first places it (its 64 x 32 source's slice), the second reduces into a
// copy in its own source's slice, converted from the vector first (it
// accumulates) and back after.
// CHECK-LABEL: func.func @reduce_into_placed_destination
// CHECK: %[[V:.*]] = tile.alloc_fragment {layout = {{.*}}} : memref<64xf32
// CHECK-NEXT: %[[OWN:.*]] = tile.alloc_fragment {layout = {{.*}}} : memref<64xf32
// CHECK: tile.reduce %{{.*}} to %[[V]]
// CHECK: tile.copy %[[V]]{{.*}} to %[[OWN]]
// CHECK-NEXT: tile.reduce %{{.*}} to %[[OWN]]
// CHECK: tile.copy %[[OWN]]{{.*}} to %[[V]]
// CHECK-NEXT: tile.copy %[[V]]{{.*}} to %arg
func.func @reduce_into_placed_destination(%A: memref<64x32xf32>, %B: memref<64x128xf32>, %S: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %b = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %v = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf32> to memref<64x32xf32, #tile.space<fragment>>
    tile.copy %B[%c0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<64x128xf32> to memref<64x128xf32, #tile.space<fragment>>
    tile.reduce %a to %v {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear} : memref<64x32xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    tile.reduce %b to %v {kind = #tile.reduce_kind<sum>, dim = 1 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    tile.copy %v[%c0] [64] to %S[%c0] [64] : memref<64xf32, #tile.space<fragment>> to memref<64xf32>
  }
  return
}

// -----

// A packed operand: x[i, j floordiv 2] beside y[i, j] (two 4-bit values a
// byte). The loop's j splits into (j floordiv 2, j mod 2) of extents (32, 2):
// x becomes a row vector of the split loop (its inner index left out), y a
// view with that dimension split, j mod 2 the inner index.
// CHECK-LABEL: func.func @packed_operand
// CHECK: %[[Y:.*]] = tile.alloc_fragment {layout = {{.*}}} : memref<64x64xf16, #tile.space<fragment>>
// CHECK: %[[V:.*]] = tile.view %[[Y]] : memref<64x64xf16, #tile.space<fragment>> to memref<64x32x2xf16, #tile.space<fragment>>
// CHECK: tile.parallel (%[[I:.*]], %[[JJ:.*]], %[[E:.*]]) in [64, 32, 2] attributes {layout =
// CHECK: memref.load %{{.*}}[%[[I]], %[[JJ]]] : memref<64x32xi8, #tile.space<fragment>>
// CHECK: arith.muli %[[E]]
// CHECK: memref.store %{{.*}}, %[[V]][%[[I]], %[[JJ]], %[[E]]] : memref<64x32x2xf16, #tile.space<fragment>>
func.func @packed_operand(%B: memref<64x32xi8>, %C: memref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment : memref<64x32xi8, #tile.space<fragment>>
    %y = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    tile.copy %B[%c0, %c0] [64, 32] to %x[%c0, %c0] [64, 32] : memref<64x32xi8> to memref<64x32xi8, #tile.space<fragment>>
    tile.parallel (%i, %j) in [64, 64] {
      %c2 = arith.constant 2 : index
      %q = arith.floordivsi %j, %c2 : index
      %b = memref.load %x[%i, %q] : memref<64x32xi8, #tile.space<fragment>>
      %r = arith.remsi %j, %c2 : index
      %c4 = arith.constant 4 : index
      %s = arith.muli %r, %c4 : index
      %w = arith.index_castui %b : i8 to index
      %n = arith.shrui %w, %s : index
      %c15 = arith.constant 15 : index
      %v = arith.andi %n, %c15 : index
      %vi = arith.index_cast %v : index to i64
      %f = arith.sitofp %vi : i64 to f16
      memref.store %f, %y[%i, %j] : memref<64x64xf16, #tile.space<fragment>>
    }
    tile.copy %y[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf16, #tile.space<fragment>> to memref<64x64xf16>
  }
  return
}

// -----

// A fragment at a row-major linear index of the loop's indices, f[i * 64 + j]
// (TileLang's composable index): a view of f as 32 x 64, indexed (i, j).
// CHECK-LABEL: func.func @linear_index
// CHECK: %[[B:.*]] = tile.alloc_fragment {layout = {{.*}}} : memref<2048xf16, #tile.space<fragment>>
// CHECK: %[[V:.*]] = tile.view %[[B]] : memref<2048xf16, #tile.space<fragment>> to memref<32x64xf16, #tile.space<fragment>>
// CHECK: tile.parallel (%[[I:.*]], %[[J:.*]]) in [32, 64]
// CHECK: memref.store %{{.*}}, %[[V]][%[[I]], %[[J]]] : memref<32x64xf16, #tile.space<fragment>>
func.func @linear_index(%A: memref<32x64xf16>, %B: memref<2048xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_fragment : memref<32x64xf16, #tile.space<fragment>>
    %b = tile.alloc_fragment : memref<2048xf16, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [32, 64] to %a[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tile.space<fragment>>
    tile.parallel (%i, %j) in [32, 64] {
      %x = memref.load %a[%i, %j] : memref<32x64xf16, #tile.space<fragment>>
      %c64 = arith.constant 64 : index
      %r = arith.muli %i, %c64 : index
      %k = arith.addi %r, %j : index
      memref.store %x, %b[%k] : memref<2048xf16, #tile.space<fragment>>
    }
    tile.copy %b[%c0] [2048] to %B[%c0] [2048] : memref<2048xf16, #tile.space<fragment>> to memref<2048xf16>
  }
  return
}

// -----

// A shared tile added into a global tensor: on sm_90 the loop takes runs of
// 4 columns a thread (one vector reduction a run, red.global.add.v4.f32);
// before sm_90, which has no vector reductions, one column a register.
// CHECK-LABEL: func.func @shared_tile_add
// CHECK: layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64, d0 mod 64)>
// WGMMA-LABEL: func.func @shared_tile_add
// WGMMA: layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 64, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 64)>
func.func @shared_tile_add(%C: memref<16x64xf32>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<16x64xf32, #gpu.address_space<workgroup>>
    tile.parallel (%i, %j) in [16, 64] {
      %v = memref.load %s[%i, %j] : memref<16x64xf32, #gpu.address_space<workgroup>>
      %0 = memref.atomic_rmw addf %v, %C[%i, %j] : (f32, memref<16x64xf32>) -> f32
    }
  }
  return
}

// -----

// A loop over 32 rows reading a gemm's 64-row accumulator at i + 32 * s (a
// dimension split in two, s outside the loop). With FullCol on mma.sync each
// warp holds all 64 rows of its columns, so rows i and i + 32 are in one
// thread: the loop takes the accumulator's layout with the halves sliced out
// (an element a thread) and reads its registers: no converted copy.
// CHECK-LABEL: func.func @shifted_half
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32
// CHECK-NOT: tile.alloc_fragment
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [32, 64] attributes {layout = #tile.layout<threads = 128, regs = 16
// CHECK-NOT: tile.alloc_fragment
func.func @shifted_half(%A: memref<64x64xf16>, %C: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %acc = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %half = tile.alloc_shared : memref<32x64xf32, #gpu.address_space<workgroup>>
    tile.gemm %a, %a, %acc {clear_accum, policy = #tile.warp_policy<full_col>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    scf.for %s = %c0 to %c2 step %c1 {
      tile.parallel (%i, %j) in [32, 64] {
        %shift = arith.muli %s, %c32 : index
        %row = arith.addi %i, %shift : index
        %x = memref.load %acc[%row, %j] : memref<64x64xf32, #tile.space<fragment>>
        memref.store %x, %half[%i, %j] : memref<32x64xf32, #gpu.address_space<workgroup>>
      }
    }
  }
  return
}
