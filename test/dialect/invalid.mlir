// RUN: tlc-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the tile dialect (TileOps.cpp, TileAttrs.cpp)
// and per ODS constraint worth pinning. Every expected-error holds the whole
// message.

//===----------------------------------------------------------------------===//
// tile.kernel
//===----------------------------------------------------------------------===//

func.func @kernel_grid_0d() {
  // expected-error @+1 {{'tile.kernel' op grid must have 1 to 3 dimensions, got 0}}
  tile.kernel blocks() in () threads = 128 {
  }
  return
}

// -----

func.func @kernel_grid_4d() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tile.kernel' op grid must have 1 to 3 dimensions, got 4}}
  tile.kernel blocks(%a, %b, %c, %d) in (%c1, %c1, %c1, %c1) threads = 128 {
  }
  return
}

// -----

func.func @kernel_threads_0() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tile.kernel' op threads must be in [1, 1024], got 0}}
  tile.kernel blocks(%bx) in (%c1) threads = 0 {
  }
  return
}

// -----

func.func @kernel_threads_2048() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tile.kernel' op threads must be in [1, 1024], got 2048}}
  tile.kernel blocks(%bx) in (%c1) threads = 2048 {
  }
  return
}

// -----

// The producer warpgroup tile-pipeline-loops adds: whole warps, with the
// kernel's threads at most 1024 (a mutant with 2^32 of them crashed a pass).
func.func @kernel_producer_threads_too_many() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tile.kernel' op tile.producer_threads must be whole warps that, with the kernel's 128 threads, make at most 1024, got 4294967296 : i64}}
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 4294967296 : i64} {
  }
  return
}

// -----

func.func @kernel_producer_threads_part_warp() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{tile.producer_threads must be whole warps}}
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 40 : i64} {
  }
  return
}

// -----

func.func @kernel_nested() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.kernel' op cannot be nested in another tile.kernel}}
    tile.kernel blocks(%by) in (%c1) threads = 128 {
    }
  }
  return
}

// -----

func.func @kernel_block_index_count() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tile.kernel' op expected one block-index argument per grid dimension (1), got 2}}
  tile.kernel blocks(%bx, %by) in (%c1) threads = 128 {
  }
  return
}

// -----

// The custom syntax always makes block indices `index`; the generic form can
// give them another type.
func.func @kernel_block_index_type() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tile.kernel' op block indices must be of index type, got 'i32'}}
  "tile.kernel"(%c1) <{threads = 128 : i64}> ({
  ^bb0(%bx: i32):
  }) : (index) -> ()
  return
}

// -----

// ODS: grid sizes are `index` values.
func.func @kernel_grid_type(%n: i32) {
  // expected-error @+1 {{'tile.kernel' op operand #0 must be variadic of index, but got 'i32'}}
  "tile.kernel"(%n) <{threads = 128 : i64}> ({
  ^bb0(%bx: index):
  }) : (i32) -> ()
  return
}

//===----------------------------------------------------------------------===//
// Allocations
//===----------------------------------------------------------------------===//

// -----

func.func @alloc_shared_outside_kernel() {
  // expected-error @+1 {{'tile.alloc_shared' op must be nested in a tile.kernel}}
  %s = tile.alloc_shared : memref<64xf32, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @alloc_fragment_outside_kernel() {
  // expected-error @+1 {{'tile.alloc_fragment' op must be nested in a tile.kernel}}
  %f = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
  return
}

// -----

func.func @alloc_local_outside_kernel() {
  // expected-error @+1 {{'tile.alloc_local' op must be nested in a tile.kernel}}
  %l = tile.alloc_local : memref<4xf32, #tile.space<local>>
  return
}

// -----

// A gpu.func counts as a kernel only with a known block size.
gpu.module @kernels {
  gpu.func @no_block_size() kernel {
    // expected-error @+1 {{'tile.alloc_fragment' op must be nested in a tile.kernel}}
    %f = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    gpu.return
  }
}

// -----

func.func @alloc_shared_wrong_space() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op result must be in shared memory, got fragment memory}}
    %s = tile.alloc_shared : memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @alloc_fragment_wrong_space() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_fragment' op result must be in fragment memory, got local memory}}
    %f = tile.alloc_fragment : memref<64xf32, #tile.space<local>>
  }
  return
}

// -----

func.func @alloc_local_wrong_space() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_local' op result must be in local memory, got shared memory}}
    %l = tile.alloc_local : memref<4xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @alloc_shared_private_space() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op result must be in shared memory, got memory space #gpu.address_space<private>}}
    %s = tile.alloc_shared : memref<64xf32, #gpu.address_space<private>>
  }
  return
}

// -----

func.func @alloc_non_identity_layout() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op result must have the identity layout, got affine_map<(d0, d1) -> (d1, d0)>}}
    %s = tile.alloc_shared : memref<8x8xf32, affine_map<(d0, d1) -> (d1, d0)>, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @alloc_strided_layout() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_fragment' op result must have the identity layout, got strided<[1, 8]>}}
    %f = tile.alloc_fragment : memref<8x8xf32, strided<[1, 8]>, #tile.space<fragment>>
  }
  return
}

// -----

func.func @alloc_element_type() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_local' op element type must be an integer or float, got 'index'}}
    %l = tile.alloc_local : memref<4xindex, #tile.space<local>>
  }
  return
}

// -----

// ODS: allocations are statically shaped.
func.func @alloc_shared_dynamic() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op result #0 must be statically shaped memref of any type values, but got 'memref<?xf32, #gpu.address_space<workgroup>>'}}
    %s = tile.alloc_shared : memref<?xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @alloc_fragment_dynamic() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_fragment' op result #0 must be statically shaped memref of any type values, but got 'memref<32x?xf32, #tile.space<fragment>>'}}
    %f = tile.alloc_fragment : memref<32x?xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @alloc_local_dynamic() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_local' op result #0 must be statically shaped memref of any type values, but got 'memref<?xf32, #tile.space<local>>'}}
    %l = tile.alloc_local : memref<?xf32, #tile.space<local>>
  }
  return
}

// -----

func.func @alloc_shared_negative_offset() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op offset must be non-negative, got -16}}
    %s = tile.alloc_shared {offset = -16 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @alloc_fragment_layout_threads() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_fragment' op layout spreads over 64 threads but the kernel has 128}}
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> (d0)>} : memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// The thread count of an outlined kernel is its known block size.
gpu.module @kernels {
  gpu.func @outlined() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error @+1 {{'tile.alloc_fragment' op layout spreads over 64 threads but the kernel has 32}}
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> (d0)>} : memref<64xf32, #tile.space<fragment>>
    gpu.return
  }
}

// -----

// A warp-specialized kernel's layouts spread over its consumer threads, not
// the whole block.
gpu.module @kernels {
  gpu.func @outlined_with_producer() kernel attributes {known_block_size = array<i32: 256, 1, 1>, tile.producer_threads = 128 : i64} {
    // expected-error @+1 {{'tile.alloc_fragment' op layout spreads over 256 threads but the kernel has 128}}
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 256, regs = 1, map = (d0, d1) -> (d0)>} : memref<256xf32, #tile.space<fragment>>
    gpu.return
  }
}

// -----

func.func @alloc_fragment_layout_rank() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 4 {
    // expected-error @+1 {{'tile.alloc_fragment' op layout does not cover the 4x8 tile: layout gives 1 indices but the tile has rank 2}}
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 4, regs = 8, map = (d0, d1) -> (d0 * 8 + d1)>} : memref<4x8xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @alloc_fragment_layout_not_multiple() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 4 {
    // expected-error @+1 {{'tile.alloc_fragment' op layout does not cover the 4x8 tile: layout holds 12 registers in all (threads 4 x regs 3), not a multiple of the tile's 32 elements}}
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 4, regs = 3, map = (d0, d1) -> (d0, d1)>} : memref<4x8xf32, #tile.space<fragment>>
  }
  return
}

// -----

// (A fuzzed input: enumerating 2^31 registers a thread hung the verifier.)
func.func @alloc_fragment_layout_too_many_registers() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    // expected-error @+1 {{'tile.alloc_fragment' op layout does not cover the 32 tile: layout gives each thread 2147483647 registers, more than the tile's 32 elements}}
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 2147483647, map = (d0, d1) -> (d0)>} : memref<32xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @alloc_fragment_layout_outside() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 4 {
    // Row d0 + 1: thread 3 register 0 names row 4 of a 4-row tile.
    // expected-error @+1 {{'tile.alloc_fragment' op layout does not cover the 4x8 tile: thread 3 register 0 maps outside the tile}}
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 4, regs = 8, map = (d0, d1) -> ((d0 + 1) mod 5, d1)>} : memref<4x8xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @alloc_fragment_layout_holds_twice() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 4 {
    // Registers 0-7 of every thread name columns 0-3 twice and columns 4-7 never.
    // expected-error @+1 {{'tile.alloc_fragment' op layout does not cover the 4x8 tile: element 0 (row-major) is held 2 times, expected 1}}
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 4, regs = 8, map = (d0, d1) -> (d0, d1 mod 4)>} : memref<4x8xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @alloc_fragment_layout_replication_uneven() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 4 {
    // 8 pairs over 4 elements: each element should be held twice, but
    // threads 0 and 1 both hold element 0 in both registers.
    // expected-error @+1 {{'tile.alloc_fragment' op layout does not cover the 4 tile: element 0 (row-major) is held 4 times, expected 2}}
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 4, regs = 2, map = (d0, d1) -> (d0 floordiv 2)>} : memref<4xf32, #tile.space<fragment>>
  }
  return
}

//===----------------------------------------------------------------------===//
// #tile.layout and #tile.swizzle
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{layout needs positive threads and regs, got threads = 0, regs = 4}}
func.func @layout_zero_threads() attributes {tile.l = #tile.layout<threads = 0, regs = 4, map = (d0, d1) -> (d1)>} {
  return
}

// -----

// expected-error @+1 {{layout needs positive threads and regs, got threads = 32, regs = -1}}
func.func @layout_negative_regs() attributes {tile.l = #tile.layout<threads = 32, regs = -1, map = (d0, d1) -> (d0)>} {
  return
}

// -----

// expected-error @+1 {{layout map must take (thread, register) and no symbols, got affine_map<(d0) -> (d0)>}}
func.func @layout_one_dim() attributes {tile.l = #tile.layout<threads = 32, regs = 1, map = (d0) -> (d0)>} {
  return
}

// -----

// expected-error @+1 {{layout map must take (thread, register) and no symbols, got affine_map<(d0, d1, d2) -> (d0)>}}
func.func @layout_three_dims() attributes {tile.l = #tile.layout<threads = 32, regs = 1, map = (d0, d1, d2) -> (d0)>} {
  return
}

// -----

// expected-error @+1 {{layout map must take (thread, register) and no symbols, got affine_map<(d0, d1)[s0] -> (d0 + s0)>}}
func.func @layout_symbol() attributes {tile.l = #tile.layout<threads = 32, regs = 1, map = (d0, d1)[s0] -> (d0 + s0)>} {
  return
}

// -----

// expected-error @+1 {{layout map must give at least one index}}
func.func @layout_no_results() attributes {tile.l = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> ()>} {
  return
}

// -----

// expected-error @+1 {{swizzle parameters must be non-negative, got bits = -1, base = 4, shift = 3}}
func.func @swizzle_negative() attributes {tile.s = #tile.swizzle<bits = -1, base = 4, shift = 3>} {
  return
}

// -----

// expected-error @+1 {{swizzle shift (2) must be at least bits (3) for the XOR to be a permutation}}
func.func @swizzle_shift_below_bits() attributes {tile.s = #tile.swizzle<bits = 3, base = 4, shift = 2>} {
  return
}

// -----

// expected-error @+1 {{swizzle reads bit 20 of the offset, but shared-memory offsets stay below bit 18}}
func.func @swizzle_too_wide() attributes {tile.s = #tile.swizzle<bits = 3, base = 8, shift = 10>} {
  return
}

// -----

func.func @swizzle_on_alloc() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+2 {{swizzle shift (0) must be at least bits (3) for the XOR to be a permutation}}
    // expected-error @+1 {{failed to parse Tile_SharedLayoutAttr parameter 'swizzle'}}
    %s = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 0>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// expected-error @+1 {{shared layout stages must be non-negative, got -1}}
func.func @shared_layout_negative_stages() attributes {tile.s = #tile.shared<stages = -1>} {
  return
}

// -----

// expected-error @+1 {{shared layout column_block must be non-negative, got -64}}
func.func @shared_layout_negative_block() attributes {tile.s = #tile.shared<column_block = -64>} {
  return
}

// -----

func.func @shared_layout_stages_not_leading() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op layout does not fit the buffer: its 3 stages must be the leading dimension of a buffer of rank 2 or more, got 2x64x32}}
    %s = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<2x64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @shared_layout_block_not_dividing() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op layout does not fit the buffer: column blocks of 64 need 2-d stages whose columns they divide, got 64x96}}
    %s = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x96xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @shared_layout_block_rank() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op layout does not fit the buffer: column blocks of 64 need 2-d stages whose columns they divide, got 2x64x128}}
    %s = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<2x64x128xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @shared_layout_stage_below_swizzle_period() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op layout does not fit the buffer: a stage of 512 bytes is not a multiple of the swizzle's 1024-byte period}}
    %s = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x4x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @stage_without_stages(%s: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.stage' op indexes the stages of a buffer whose layout does not say `stages = 3` (#tile.shared)}}
    %one = tile.stage %all[%s] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.copy
//===----------------------------------------------------------------------===//

// -----

func.func @copy_outside_kernel(%A: memref<64xf32>, %B: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.copy' op must be nested in a tile.kernel}}
  tile.copy %A[%c0] [64] to %B[%c0] [64] : memref<64xf32> to memref<64xf32>
  return
}

// -----

func.func @copy_integer_memory_space(%A: memref<4xf32, 3>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<4xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.copy' op source has an unsupported memory space 3 : i64}}
    tile.copy %A[%c0] [4] to %f[%c0] [4] : memref<4xf32, 3> to memref<4xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @copy_private_memory_space(%A: memref<4xf32>, %P: memref<4xf32, #gpu.address_space<private>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.copy' op destination has an unsupported memory space #gpu.address_space<private>}}
    tile.copy %A[%c0] [4] to %P[%c0] [4] : memref<4xf32> to memref<4xf32, #gpu.address_space<private>>
  }
  return
}

// -----

func.func @copy_element_type(%A: memref<4xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %l = tile.alloc_local : memref<4xi64, #tile.space<local>>
    // expected-error @+1 {{'tile.copy' op source element type must be an integer or float, got 'index'}}
    tile.copy %A[%c0] [4] to %l[%c0] [4] : memref<4xindex> to memref<4xi64, #tile.space<local>>
  }
  return
}

// -----

func.func @copy_index_count(%A: memref<?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.copy' op expected 2 source indices, got 1}}
    tile.copy %A[%i] [64, 32] to %s[%c0, %c0] [64, 32] : memref<?x?xf32> to memref<64x32xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @copy_size_count(%A: memref<?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.copy' op expected 2 destination sizes, got 3}}
    tile.copy %A[%i, %i] [64, 32] to %s[%c0, %c0] [64, 32, 1] : memref<?x?xf32> to memref<64x32xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @copy_size_zero(%A: memref<?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.copy' op source size 0 in dimension 1 must be positive}}
    tile.copy %A[%i, %i] [64, 0] to %s[%c0, %c0] [64, 32] : memref<?x?xf32> to memref<64x32xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @copy_size_negative(%A: memref<?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.copy' op destination size -64 in dimension 0 must be positive}}
    tile.copy %A[%i, %i] [64, 32] to %s[%c0, %c0] [-64, 32] : memref<?x?xf32> to memref<64x32xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @copy_exceeds_dimension(%A: memref<?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.copy' op destination region of size 128 exceeds dimension 0 of size 64}}
    tile.copy %A[%i, %i] [128, 32] to %s[%c0, %c0] [128, 32] : memref<?x?xf32> to memref<64x32xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @copy_offset_overflow(%A: memref<?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.copy' op source region [48, 80) exceeds dimension 0 of size 64}}
    tile.copy %s[%c48, %c0] [32, 32] to %A[%i, %i] [32, 32] : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<?x?xf32>
  }
  return
}

// -----

func.func @copy_partial_fragments(%A: memref<?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %g = tile.alloc_fragment : memref<32x32xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.copy' op copies between fragments take them whole}}
    tile.copy %f[%c0, %c0] [32, 32] to %g[%c0, %c0] [32, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<32x32xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @copy_fragment_offset(%A: memref<?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.copy' op a fragment source region must start at constant indices}}
    tile.copy %f[%c0, %i] [64, 32] to %A[%i, %i] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

func.func @copy_shape_mismatch(%A: memref<?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.copy' op source region 32x64 and destination region 64x32 differ after dropping unit dimensions (32x64 vs 64x32)}}
    tile.copy %A[%i, %i] [32, 64] to %s[%c0, %c0] [64, 32] : memref<?x?xf32> to memref<64x32xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @copy_shape_mismatch_squeezed(%Q: memref<?x?x?x128xf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.copy' op source region 1x64x2x128 and destination region 64x128 differ after dropping unit dimensions (64x2x128 vs 64x128)}}
    tile.copy %Q[%i, %i, %i, %c0] [1, 64, 2, 128] to %s[%c0, %c0] [64, 128] : memref<?x?x?x128xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.fill
//===----------------------------------------------------------------------===//

// -----

func.func @fill_outside_kernel(%s: memref<4xf32, #tile.space<local>>, %v: f32) {
  // expected-error @+1 {{'tile.fill' op must be nested in a tile.kernel}}
  tile.fill %s, %v : memref<4xf32, #tile.space<local>>, f32
  return
}

// -----

func.func @fill_global(%A: memref<64xf32>, %v: f32) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.fill' op can fill shared, fragment or local buffers, got one in global memory (no memory space)}}
    tile.fill %A, %v : memref<64xf32>, f32
  }
  return
}

// -----

func.func @fill_value_type(%v: f16) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.fill' op value type 'f16' does not match the element type 'f32'}}
    tile.fill %f, %v : memref<64xf32, #tile.space<fragment>>, f16
  }
  return
}

// -----

// ODS: fill needs a statically shaped buffer.
func.func @fill_dynamic(%S: memref<?xf32, #gpu.address_space<workgroup>>, %v: f32) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.fill' op operand #0 must be statically shaped memref of any type values, but got 'memref<?xf32, #gpu.address_space<workgroup>>'}}
    tile.fill %S, %v : memref<?xf32, #gpu.address_space<workgroup>>, f32
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.parallel
//===----------------------------------------------------------------------===//

// -----

func.func @parallel_outside_kernel() {
  // expected-error @+1 {{'tile.parallel' op must be nested in a tile.kernel}}
  tile.parallel (%i) in [4] {
  }
  return
}

// -----

func.func @parallel_empty_shape() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.parallel' op needs at least one dimension}}
    tile.parallel () in [] {
    }
  }
  return
}

// -----

func.func @parallel_zero_extent() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.parallel' op extents must be positive, got 4x0}}
    tile.parallel (%i, %j) in [4, 0] {
    }
  }
  return
}

// -----

func.func @parallel_negative_extent() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.parallel' op extents must be positive, got -4}}
    tile.parallel (%i) in [-4] {
    }
  }
  return
}

// -----

// (A fuzzed input: layout inference asked for 2^37 registers.)
func.func @parallel_too_many_iterations() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.parallel' op has 2147483648x64 iterations, more than 16777216 (2^24) in one block}}
    tile.parallel (%i, %j) in [2147483648, 64] {
    }
  }
  return
}

// -----

func.func @parallel_layout_not_covering() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 4 {
    // expected-error @+1 {{'tile.parallel' op layout does not cover the 4x8 loop: layout holds 16 registers in all (threads 4 x regs 4), not a multiple of the tile's 32 elements}}
    tile.parallel (%i, %j) in [4, 8] attributes {layout = #tile.layout<threads = 4, regs = 4, map = (d0, d1) -> (d0, d1)>} {
    }
  }
  return
}

// -----

func.func @parallel_layout_rank() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 4 {
    // expected-error @+1 {{'tile.parallel' op layout does not cover the 32 loop: layout gives 2 indices but the tile has rank 1}}
    tile.parallel (%i) in [32] attributes {layout = #tile.layout<threads = 4, regs = 8, map = (d0, d1) -> (d0, d1)>} {
    }
  }
  return
}

// -----

func.func @parallel_nested_fill(%v: f32) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    tile.parallel (%i) in [64] {
      // expected-error @+1 {{'tile.fill' op cannot be nested in a tile.parallel body}}
      tile.fill %f, %v : memref<64xf32, #tile.space<fragment>>, f32
    }
  }
  return
}

// -----

func.func @parallel_nested_alloc() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    tile.parallel (%i) in [64] {
      // expected-error @+1 {{'tile.alloc_shared' op cannot be nested in a tile.parallel body}}
      %s = tile.alloc_shared : memref<64xf32, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

func.func @parallel_nested_parallel() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    tile.parallel (%i) in [64] {
      // expected-error @+1 {{'tile.parallel' op cannot be nested in a tile.parallel body}}
      tile.parallel (%j) in [2] {
      }
    }
  }
  return
}

// -----

func.func @parallel_index_count() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.parallel' op expected 2 loop indices, got 1}}
    tile.parallel (%i) in [4, 8] {
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.pipelined
//===----------------------------------------------------------------------===//

// -----

func.func @pipelined_zero_stages() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.pipelined' op num_stages must be at least 1, got 0}}
    tile.pipelined %k = %c0 to %c8 step %c1 num_stages = 0 {
    }
  }
  return
}

// -----

// A negative count is no huge unsigned one.
func.func @pipelined_negative_stages() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.pipelined' op num_stages must be at least 1, got -2}}
    tile.pipelined %k = %c0 to %c8 step %c1 num_stages = -2 {
    }
  }
  return
}

// -----

// Copies issued after the other ops need copies issued ahead.
func.func @pipelined_copies_last_one_stage() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.pipelined' op copies_last needs a pipelined loop (num_stages >= 2), got 1}}
    tile.pipelined %k = %c0 to %c8 step %c1 num_stages = 1 attributes {copies_last} {
    }
  }
  return
}

// -----

func.func @pipelined_zero_step() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.pipelined' op step must be positive, got 0}}
    tile.pipelined %k = %c0 to %c8 step %c0 num_stages = 2 {
    }
  }
  return
}

// -----

func.func @pipelined_negative_step() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cm2 = arith.constant -2 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.pipelined' op step must be positive, got -2}}
    tile.pipelined %k = %c8 to %c0 step %cm2 num_stages = 2 {
    }
  }
  return
}

// -----

// The custom syntax always gives one index induction variable; the generic
// form can give another.
func.func @pipelined_induction_variable() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.pipelined' op expects one index induction variable}}
    "tile.pipelined"(%c0, %c8, %c1) <{num_stages = 2 : i64}> ({
    ^bb0(%k: i32):
    }) : (index, index, index) -> ()
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.gemm
//===----------------------------------------------------------------------===//

// -----

func.func @gemm_outside_kernel(%a: memref<16x16xf16, #gpu.address_space<workgroup>>, %c: memref<16x16xf32, #tile.space<fragment>>) {
  // expected-error @+1 {{'tile.gemm' op must be nested in a tile.kernel}}
  tile.gemm %a, %a, %c : memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
  return
}

// -----

func.func @gemm_a_global(%A: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %b = tile.alloc_shared : memref<16x16xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<16x16xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op A must be in shared memory or a fragment, got global memory}}
    tile.gemm %A, %b, %c : memref<16x16xf16>, memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @gemm_b_fragment() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<16x16xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_fragment : memref<16x16xf16, #tile.space<fragment>>
    %c = tile.alloc_fragment : memref<16x16xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op B must be in shared memory, got fragment memory}}
    tile.gemm %a, %b, %c : memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf16, #tile.space<fragment>>, memref<16x16xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @gemm_c_shared() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<16x16xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_shared : memref<16x16xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.gemm' op C must be a fragment, got shared memory}}
    tile.gemm %a, %a, %c : memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @gemm_rank() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<2x16x16xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<16x16xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<16x16xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op A, B and C must be 2-d, got ranks 3, 2, 2}}
    tile.gemm %a, %b, %c : memref<2x16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @gemm_k_mismatch() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<16x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op A has K = 32 but B has K = 16}}
    tile.gemm %a, %b, %c : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<16x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// With transpose_a, A is K x M: K = 64 here, not 32.
func.func @gemm_k_mismatch_transpose_a() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op A has K = 64 but B has K = 32}}
    tile.gemm %a, %b, %c {transpose_a} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @gemm_c_shape() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op C must be 128x64 (M x N), got 64x128}}
    tile.gemm %a, %b, %c : memref<128x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
  }
  return
}

// -----

// With transpose_b, B is N x K: N = 16 here.
func.func @gemm_c_shape_transpose_b() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<16x32xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op C must be 64x16 (M x N), got 64x32}}
    tile.gemm %a, %b, %c {transpose_b} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<16x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @gemm_ab_type_mismatch() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<16x16xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<16x16xbf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<16x16xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op A and B must have the same element type, got 'f16' and 'bf16'}}
    tile.gemm %a, %b, %c : memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xbf16, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @gemm_bf16_to_f16() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<16x16xbf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<16x16xf16, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op unsupported element types: 'bf16' x 'bf16' -> 'f16' (supported: f16 -> f32|f16, bf16 -> f32, f32 -> f32, i8 -> i32, f8E4M3FN|f8E5M2 -> f32)}}
    tile.gemm %a, %a, %c : memref<16x16xbf16, #gpu.address_space<workgroup>>, memref<16x16xbf16, #gpu.address_space<workgroup>>, memref<16x16xf16, #tile.space<fragment>>
  }
  return
}

// -----

func.func @gemm_i8_to_f32() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<16x16xi8, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<16x16xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op unsupported element types: 'i8' x 'i8' -> 'f32' (supported: f16 -> f32|f16, bf16 -> f32, f32 -> f32, i8 -> i32, f8E4M3FN|f8E5M2 -> f32)}}
    tile.gemm %a, %a, %c : memref<16x16xi8, #gpu.address_space<workgroup>>, memref<16x16xi8, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @gemm_f64() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<16x16xf64, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<16x16xf64, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op unsupported element types: 'f64' x 'f64' -> 'f64' (supported: f16 -> f32|f16, bf16 -> f32, f32 -> f32, i8 -> i32, f8E4M3FN|f8E5M2 -> f32)}}
    tile.gemm %a, %a, %c : memref<16x16xf64, #gpu.address_space<workgroup>>, memref<16x16xf64, #gpu.address_space<workgroup>>, memref<16x16xf64, #tile.space<fragment>>
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.reduce
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_outside_kernel(%s: memref<64x128xf32, #tile.space<fragment>>, %m: memref<64xf32, #tile.space<fragment>>) {
  // expected-error @+1 {{'tile.reduce' op must be nested in a tile.kernel}}
  tile.reduce %s to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
  return
}

// -----

func.func @reduce_source_global(%A: memref<64x128xf32>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.reduce' op source must be a fragment or in shared memory, got global memory}}
    tile.reduce %A to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64} : memref<64x128xf32> to memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @reduce_destination_local() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %m = tile.alloc_local : memref<64xf32, #tile.space<local>>
    // expected-error @+1 {{'tile.reduce' op destination must be a fragment or in shared memory, got local memory}}
    tile.reduce %s to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<local>>
  }
  return
}

// -----

func.func @reduce_dim_too_large() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.reduce' op dim 2 is out of range for a rank-2 source}}
    tile.reduce %s to %m {kind = #tile.reduce_kind<sum>, dim = 2 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @reduce_dim_negative() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.reduce' op dim -1 is out of range for a rank-2 source}}
    tile.reduce %s to %m {kind = #tile.reduce_kind<sum>, dim = -1 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @reduce_dst_shape() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.reduce' op destination must be 64 (the source 64x128 without dimension 1), got 128}}
    tile.reduce %s to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<128xf32, #tile.space<fragment>>
  }
  return
}

// -----

// Reducing a 1-d source gives a one-element destination.
func.func @reduce_dst_shape_scalar() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<2xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.reduce' op destination must be 1 (the source 128 without dimension 0), got 2}}
    tile.reduce %s to %m {kind = #tile.reduce_kind<min>, dim = 0 : i64} : memref<128xf32, #tile.space<fragment>> to memref<2xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @reduce_element_type() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<64xf16, #tile.space<fragment>>
    // expected-error @+1 {{'tile.reduce' op source and destination element types differ: 'f32' vs 'f16'}}
    tile.reduce %s to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf16, #tile.space<fragment>>
  }
  return
}

// -----

// ODS: kind is required.
func.func @reduce_missing_kind() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.reduce' op requires attribute 'kind'}}
    tile.reduce %s to %m {dim = 1 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @alloc_without_space() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_local' op result must be in local memory, got global memory (no memory space)}}
    %l = tile.alloc_local : memref<4xf32>
  }
  return
}

// -----

func.func @gemm_a_unknown_space() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = memref.alloca() : memref<64x32xf16, 3>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op A must be in shared memory or a fragment, got memory space 3 : i64}}
    tile.gemm %a, %b, %c : memref<64x32xf16, 3>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @gemm_dynamic(%a: memref<64x?xf16, #gpu.address_space<workgroup>>, %b: memref<?x64xf16, #gpu.address_space<workgroup>>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op A, B and C must have static shapes, got 64x?, ?x64, 64x64}}
    tile.gemm %a, %b, %c : memref<64x?xf16, #gpu.address_space<workgroup>>, memref<?x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @reduce_dynamic(%s: memref<?x?xf32, #gpu.address_space<workgroup>>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.reduce' op source must have a static shape, got ?x?}}
    tile.reduce %s to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64} : memref<?x?xf32, #gpu.address_space<workgroup>> to memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @pipelined_outside_kernel() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tile.pipelined' op must be nested in a tile.kernel}}
  tile.pipelined %k = %c0 to %c1 step %c1 num_stages = 2 {
  }
  return
}

// -----

func.func @local_in_parallel() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    tile.parallel (%i) in [128] {
      // expected-error @+1 {{'tile.alloc_local' op cannot be nested in a tile.parallel body}}
      %l = tile.alloc_local : memref<4xf32, #tile.space<local>>
    }
  }
  return
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @block_size_product() kernel attributes {known_block_size = array<i32: 32, 2, 1>} {
      // expected-error @+1 {{'tile.alloc_fragment' op layout spreads over 32 threads but the kernel has 64}}
      %f = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>} : memref<32xf32, #tile.space<fragment>>
      gpu.return
    }
  }
}

// -----

func.func @stage_shape(%s: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.stage' op result must be the source without its leading stage dimension: expected 64x32, got 32x64}}
    %one = tile.stage %all[%s] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @stage_out_of_range() {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.stage' op stage 3 is out of range [0, 3)}}
    %one = tile.stage %all[%c3] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @stage_not_shared(%all: memref<3x64x32xf16>, %s: index) {
  // expected-error @+1 {{'tile.stage' op source and result must be in shared memory, got global memory (no memory space) and global memory (no memory space)}}
  %one = tile.stage %all[%s] : memref<3x64x32xf16> to memref<64x32xf16>
  return
}

// -----

func.func @stage_element_type(%s: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.stage' op element types differ: 'f16' vs 'bf16'}}
    %one = tile.stage %all[%s] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xbf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @async_to_fragment(%A: memref<64x32xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x32xf16, #tile.space<fragment>>
    // expected-error @+1 {{'tile.copy' op async copies go from global to shared memory with one element type, got global memory (no memory space) 'f16' to fragment memory 'f16'}}
    tile.copy %A[%c0, %c0] [64, 32] to %f[%c0, %c0] [64, 32] {async} : memref<64x32xf16> to memref<64x32xf16, #tile.space<fragment>>
  }
  return
}

// -----

func.func @predicate_on_sync_copy(%A: memref<64x32xf16>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.copy' op only async copies take a predicate}}
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] if %p : memref<64x32xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// expected-note @+1 {{prior use here}}
func.func @predicate_not_i1(%A: memref<64x32xf16>, %p: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{use of value '%p' expects different type than prior uses: 'i1' vs 'i32'}}
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] if %p {async} : memref<64x32xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// expected-error @+1 {{unknown target architecture 'sm_70' (known: sm_80, sm_86, sm_89, sm_90, sm_90a)}}
module attributes {tile.target = #tile.target<"sm_70">} {}

// -----

// expected-error @+1 {{sm_90 lacks the features [wgmma]}}
module attributes {tile.target = #tile.target<"sm_90", features = [cp_async, wgmma]>} {}

// -----

// expected-error @+1 {{shared memory limit must be within 0..166912 bytes on sm_80, got 200000}}
module attributes {tile.target = #tile.target<"sm_80", shared = 200000>} {}

// -----

// expected-error @+1 {{registers per thread must be within 1..255, got 300}}
module attributes {tile.target = #tile.target<"sm_80", registers = 300>} {}

// -----

// expected-error @+1 {{registers per block must be within 1..65536, got 0}}
module attributes {tile.target = #tile.target<"sm_80", block_registers = 0>} {}

// -----

// expected-error @+1 {{unknown target feature 'tensor_cores'}}
module attributes {tile.target = #tile.target<"sm_80", features = [tensor_cores]>} {}

// -----

// expected-error @+1 {{unknown #tile.target field 'smem' (expected features, shared, registers or block_registers)}}
module attributes {tile.target = #tile.target<"sm_80", smem = 1024>} {}

// -----

// expected-error @+1 {{mma_sync atoms are m16n8, got m64n64}}
module attributes {test.mma = #tile.mma<kind = mma_sync, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} {}

// -----

// expected-error @+1 {{mma_sync is synchronous: depth must be 0, got 1}}
module attributes {test.mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 1>} {}

// -----

// expected-error @+1 {{wgmma atoms are m64nNk16 (16-bit inputs) or m64nNk32 (8-bit) with N a multiple of 8 up to 256, got m64n260k16}}
module attributes {test.mma = #tile.mma<kind = wgmma, m = 64, n = 260, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} {}

// -----

// expected-error @+1 {{wgmma stacks the four warps of a warpgroup along M: warps_m must be a multiple of 4, got warps_m = 2, warps_n = 2}}
module attributes {test.mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>} {}

// -----

// expected-error @+1 {{wgmma reads A from registers for 16-bit inputs only (k = 16), got k = 32}}
module attributes {test.mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 32, warps_m = 4, warps_n = 1, a = registers, depth = 0>} {}

// -----

// expected-error @+1 {{mma shape must be positive, got m = 0, n = 8, k = 16}}
module attributes {test.mma = #tile.mma<kind = mma_sync, m = 0, n = 8, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} {}

// -----

// expected-error @+1 {{mma warps must be positive, got warps_m = 0, warps_n = 1}}
module attributes {test.mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 0, warps_n = 1, a = shared, depth = 0>} {}

// -----

// expected-error @+1 {{mma depth must be -1 (no wait: a tile.wait_wgmma completes the gemm) or more, got -2}}
module attributes {test.mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = -2>} {}

// -----

// expected-error @+1 {{mma_sync is synchronous: depth must be 0, got -1}}
module attributes {test.mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = -1>} {}

// -----

func.func @mma_warps_vs_threads() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op mma partition has 2 x 4 warps but the kernel has 128 threads}}
    tile.gemm %a, %b, %c {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 4, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @mma_does_not_tile() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op mma partition 8 x 1 warps of m64n64 atoms does not tile C (64x64)}}
    tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 8, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @mma_a_place() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op mma reads A from shared but A is in registers}}
    tile.gemm %a, %b, %c {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @negative_wg_wait() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op wg_wait must be -1 (no wait) or more, got -2}}
    tile.gemm %a, %b, %c {wg_wait = -2 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @layout_divides_by_zero() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{layout map must divide by positive constants only, got `d1 mod -1`}}
    %x = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (d1 mod -1, d0)>} : memref<8x256xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @layout_floordiv_by_a_dim() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{layout map must divide by positive constants only, got `d1 floordiv 0`}}
    %x = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (d1 floordiv 0, d0)>} : memref<8x256xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @zero_size_fragment() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_fragment' op result must have a static shape of positive sizes, got 0x8}}
    %x = tile.alloc_fragment : memref<0x8xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @bool_in_memory() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_shared' op element type must be at least 8 bits wide in memory, got 'i1' (store bools as i8)}}
    %x = tile.alloc_shared : memref<128xi1, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @huge_local() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_local' op result of 65536x65536 elements is too large for on-chip memory}}
    %x = tile.alloc_local : memref<65536x65536xf32, #tile.space<local>>
  }
  return
}

// -----

func.func @tensor_map_dynamic_inner(%A: memref<4096x?xf16>) {
  // expected-error @+1 {{'tile.tensor_map' op dimension 1 of memref<4096x?xf16> is dynamic and its elements are 2 bytes apart; TMA needs every stride a multiple of 16 bytes, which that size does not guarantee}}
  %m = tile.tensor_map %A {box = array<i64: 128, 64>, swizzle = 128} : memref<4096x?xf16> -> !llvm.ptr
  return
}

// -----

func.func @tensor_map_unaligned_rows(%A: memref<?x1001xf16>) {
  // expected-error @+1 {{'tile.tensor_map' op the stride of dimension 0 of memref<?x1001xf16> is 2002 bytes, not a multiple of 16 as TMA needs}}
  %m = tile.tensor_map %A {box = array<i64: 128, 64>, swizzle = 128} : memref<?x1001xf16> -> !llvm.ptr
  return
}

// -----

func.func @tensor_map_box_rank(%A: memref<?x1024xf16>) {
  // expected-error @+1 {{'tile.tensor_map' op box has 3 extents for a rank-2 tensor}}
  %m = tile.tensor_map %A {box = array<i64: 1, 128, 64>, swizzle = 128} : memref<?x1024xf16> -> !llvm.ptr
  return
}

// -----

func.func @tensor_map_box_too_big(%A: memref<?x1024xf16>) {
  // expected-error @+1 {{'tile.tensor_map' op box extents must be in [1, 256], got 512}}
  %m = tile.tensor_map %A {box = array<i64: 512, 64>, swizzle = 128} : memref<?x1024xf16> -> !llvm.ptr
  return
}

// -----

func.func @tensor_map_row_past_swizzle(%A: memref<?x1024xf16>) {
  // expected-error @+1 {{'tile.tensor_map' op the innermost box extent is 256 bytes; it must be a multiple of 16 and at most the swizzle span}}
  %m = tile.tensor_map %A {box = array<i64: 64, 128>, swizzle = 128} : memref<?x1024xf16> -> !llvm.ptr
  return
}

// -----

func.func @tensor_map_bad_swizzle(%A: memref<?x1024xf16>) {
  // expected-error @+1 {{'tile.tensor_map' op swizzle must be 0, 32, 64 or 128 bytes, got 96}}
  %m = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 96} : memref<?x1024xf16> -> !llvm.ptr
  return
}

// -----

func.func @tensor_map_of_shared() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.tensor_map' op TMA maps row-major global tensors, not memref<64x64xf16, #gpu.address_space<workgroup>>}}
    %m = tile.tensor_map %s {box = array<i64: 64, 64>, swizzle = 128} : memref<64x64xf16, #gpu.address_space<workgroup>> -> !llvm.ptr
  }
  return
}

// -----

func.func @shared_ptr_of_fragment() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.shared_ptr' op addresses shared buffers only, got 'memref<64x64xf32, #tile.space<fragment>>'}}
    %p = tile.shared_ptr %f[%c0, %c0] : memref<64x64xf32, #tile.space<fragment>> -> !llvm.ptr<3>
  }
  return
}

// -----

func.func @shared_ptr_indices() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.shared_ptr' op expected 2 indices, got 1}}
    %p = tile.shared_ptr %s[%c0] : memref<64x64xf16, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
  }
  return
}

// -----

func.func @shared_ptr_generic() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64xi64, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.shared_ptr' op yields a shared (address space 3) pointer, got '!llvm.ptr'}}
    %p = tile.shared_ptr %s[%c0] : memref<64xi64, #gpu.address_space<workgroup>> -> !llvm.ptr
  }
  return
}

// -----

func.func @wgmma_k_of_fp8() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op a wgmma atom reads 32 bytes of K: k = 32 for 'f8E4M3FN' inputs, got 16}}
    tile.gemm %a, %b, %c {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @wait_wgmma_negative() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.wait_wgmma' op pending must be non-negative, got -1}}
    tile.wait_wgmma {pending = -1 : i64}
  }
  return
}

// -----

func.func @wait_wgmma_shared() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.wait_wgmma' op waits for gemm accumulators, which are fragments; got shared memory}}
    tile.wait_wgmma %a {pending = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @prefetch_count(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %as = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %bs = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
    %os = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %fa = tile.stage %as[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %fb = tile.stage %bs[%c0] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    %fo = tile.stage %os[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %n step %c1 {
      %a = tile.stage %as[%i] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %b = tile.stage %bs[%i] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'tile.gemm' op prefetch takes 4 stages (A's and B's first, A's and B's next), got 2}}
      tile.gemm %a, %b, %c prefetch(%fa, %fb) {prefetch_wait = 1 : i32} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

func.func @prefetch_no_wait(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %as = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %bs = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
    %os = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %fa = tile.stage %as[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %fb = tile.stage %bs[%c0] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    %fo = tile.stage %os[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %n step %c1 {
      %a = tile.stage %as[%i] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %b = tile.stage %bs[%i] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'tile.gemm' op prefetch needs a prefetch_wait of 0 or more}}
      tile.gemm %a, %b, %c prefetch(%fa, %fb, %a, %b) : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

func.func @prefetch_wait_alone(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %as = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %bs = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
    %os = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %fa = tile.stage %as[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %fb = tile.stage %bs[%c0] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    %fo = tile.stage %os[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %n step %c1 {
      %a = tile.stage %as[%i] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %b = tile.stage %bs[%i] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'tile.gemm' op has a prefetch_wait but no prefetch stages}}
      tile.gemm %a, %b, %c {prefetch_wait = 1 : i32} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

func.func @prefetch_other_buffer(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %as = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %bs = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
    %os = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %fa = tile.stage %as[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %fb = tile.stage %bs[%c0] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    %fo = tile.stage %os[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %n step %c1 {
      %a = tile.stage %as[%i] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %b = tile.stage %bs[%i] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'tile.gemm' op prefetch stage 2 must be a tile.stage of the buffer A is a stage of}}
      tile.gemm %a, %b, %c prefetch(%fa, %fb, %fo, %b) {prefetch_wait = 1 : i32} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

func.func @prefetch_wgmma(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %as = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %bs = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
    %os = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %fa = tile.stage %as[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %fb = tile.stage %bs[%c0] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    %fo = tile.stage %os[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %n step %c1 {
      %a = tile.stage %as[%i] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %b = tile.stage %bs[%i] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'tile.gemm' op prefetches only on mma.sync}}
      tile.gemm %a, %b, %c prefetch(%fa, %fb, %a, %b) {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>, prefetch_wait = 1 : i32} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

func.func @prefetch_not_last(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %as = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %bs = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
    %os = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %fa = tile.stage %as[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %fb = tile.stage %bs[%c0] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    %fo = tile.stage %os[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %n step %c1 {
      %a = tile.stage %as[%i] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %b = tile.stage %bs[%i] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'tile.gemm' op prefetches only as the last op of an scf.for}}
      tile.gemm %a, %b, %c prefetch(%fa, %fb, %a, %b) {prefetch_wait = 1 : i32} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>
      %x = arith.addi %i, %c1 : index
    }
  }
  return
}

// -----

func.func @tma_add_int8(%C: memref<4096x4096xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<64x128xi8, #gpu.address_space<workgroup>>
    %map = tile.tensor_map %C {box = array<i64: 64, 128>, swizzle = 128} : memref<4096x4096xi8> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_store' op adds f32, f16, bf16 or i32 tiles (TMA's reductions), got 'i8'}}
    tile.tma_store %t to %map[%c0, %c0] add : memref<64x128xi8, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @tma_store_unswizzled(%C: memref<4096x4096xf16>, %F: memref<4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128} : memref<4096x4096xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_store' op needs boxes of 32-, 64- or 128-byte rows with the swizzle of their width}}
    tile.tma_store %t to %map[%c0, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @tma_store_wide_rows(%C: memref<4096x4096xf16>, %F: memref<4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128} : memref<4096x4096xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_store' op needs boxes of 32-, 64- or 128-byte rows with the swizzle of their width (column_block * element bytes = 128 with #tile.swizzle<bits = 3, base = 4, shift = 3>, or a whole row of 64 / 32 bytes with bits = 2 / 1), got 256-byte rows}}
    tile.tma_store %t to %map[%c0, %c0] : memref<64x128xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @tma_store_stage(%C: memref<4096x4096xf16>, %F: memref<4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.stage %t[%c0] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128} : memref<4096x4096xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_store' op stores a whole tile.alloc_shared buffer (not a stage or a view)}}
    tile.tma_store %s to %map[%c0, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @tma_store_coordinates(%C: memref<4096x4096xf16>, %F: memref<4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128} : memref<4096x4096xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_store' op expected 2 coordinates for 'memref<4096x4096xf16>', got 1}}
    tile.tma_store %t to %map[%c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @tma_store_box(%C: memref<4096x4096xf16>, %F: memref<4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %map = tile.tensor_map %C {box = array<i64: 128, 64>, swizzle = 128} : memref<4096x4096xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_store' op the tensor map's box (128 x 64, swizzle 128) is not one 64 x 64 column block of the tile with the 128-byte swizzle}}
    tile.tma_store %t to %map[%c0, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @tma_store_dtype(%C: memref<4096x4096xf16>, %F: memref<4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared {layout = #tile.shared<column_block = 32, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<64x64xf32, #gpu.address_space<workgroup>>
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128} : memref<4096x4096xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_store' op stores 'f32' elements into a tensor of 'f16'}}
    tile.tma_store %t to %map[%c0, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @tma_store_fragment(%C: memref<4096x4096xf16>, %F: memref<4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128} : memref<4096x4096xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_store' op stores a 2-d shared buffer, got 'memref<64x64xf16, #tile.space<fragment>>'}}
    tile.tma_store %t to %map[%c0, %c0] : memref<64x64xf16, #tile.space<fragment>>
  }
  return
}

// -----

func.func @pipeline_part_warp(%B: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.pipeline' op consumers must be whole warps (a multiple of 32 threads), got 100}}
    %pipe = tile.pipeline stages = 2, consumers = 100 : !tile.pipeline
  }
  return
}

// -----

func.func @pipeline_too_many_stages() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.pipeline' op has at most 4096 stages (each holds shared memory), got 2147483648}}
    %pipe = tile.pipeline stages = 2147483648, consumers = 128 : !tile.pipeline
  }
  return
}

// -----

func.func @pipeline_no_stages(%B: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.pipeline' op attribute 'stages' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
    %pipe = tile.pipeline stages = 0, consumers = 128 : !tile.pipeline
  }
  return
}

// -----

func.func @pipeline_outside_kernel() {
  // expected-error @+1 {{'tile.pipeline' op must be directly in a tile.kernel (every thread of the block initialises it)}}
  %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
  return
}

// -----

func.func @tma_load_not_a_stage(%B: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %map = tile.tensor_map %B {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_load' op loads into one stage (a tile.stage) of a tile.alloc_shared buffer}}
    tile.tma_load %map[%k, %c0] to %t, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
  }
  return
}

// -----

func.func @tma_load_unswizzled(%B: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %view = tile.stage %all[%c1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %map = tile.tensor_map %B {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_load' op needs boxes of 32-, 64- or 128-byte rows with the swizzle of their width}}
    tile.tma_load %map[%k, %c0] to %view, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
  }
  return
}

// -----

// 64-byte rows need the 64-byte swizzle (bits = 2), not the 128-byte one.
func.func @tma_load_narrow_rows_wide_swizzle(%A: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<2x128x32xf16, #gpu.address_space<workgroup>>
    %view = tile.stage %all[%c1] : memref<2x128x32xf16, #gpu.address_space<workgroup>> to memref<128x32xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %map = tile.tensor_map %A {box = array<i64: 128, 32>, swizzle = 64} : memref<1024x1024xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_load' op needs boxes of 32-, 64- or 128-byte rows with the swizzle of their width (column_block * element bytes = 128 with #tile.swizzle<bits = 3, base = 4, shift = 3>, or a whole row of 64 / 32 bytes with bits = 2 / 1), got 64-byte rows}}
    tile.tma_load %map[%c0, %k] to %view, %pipe[%k] : memref<128x32xf16, #gpu.address_space<workgroup>>, !tile.pipeline
  }
  return
}

// -----

func.func @tma_load_box(%B: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2, column_block = 64, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<2x64x128xf16, #gpu.address_space<workgroup>>
    %view = tile.stage %all[%c1] : memref<2x64x128xf16, #gpu.address_space<workgroup>> to memref<64x128xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %map = tile.tensor_map %B {box = array<i64: 128, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_load' op the tensor map's box (128 x 64, swizzle 128) is not one 64 x 64 column block of the tile with the 128-byte swizzle}}
    tile.tma_load %map[%k, %c0] to %view, %pipe[%k] : memref<64x128xf16, #gpu.address_space<workgroup>>, !tile.pipeline
  }
  return
}

// -----

func.func @tma_load_dtype(%F: memref<1024x1024xf32>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %view = tile.stage %all[%c1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %map = tile.tensor_map %F {box = array<i64: 64, 32>, swizzle = 128} : memref<1024x1024xf32> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_load' op loads 'f16' elements from a tensor of 'f32'}}
    tile.tma_load %map[%k, %c0] to %view, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
  }
  return
}

// -----

func.func @tma_load_coordinates(%B: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %view = tile.stage %all[%c1] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %map = tile.tensor_map %B {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_load' op expected 2 coordinates for 'memref<1024x1024xf16>', got 1}}
    tile.tma_load %map[%k] to %view, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
  }
  return
}

// -----

func.func @tma_load_fragment(%B: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %map = tile.tensor_map %B {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
    // expected-error @+1 {{'tile.tma_load' op loads into a 2-d shared buffer, got 'memref<64x64xf16, #tile.space<fragment>>'}}
    tile.tma_load %map[%k, %c0] to %t, %pipe[%k] : memref<64x64xf16, #tile.space<fragment>>, !tile.pipeline
  }
  return
}

// -----

func.func @semaphore_signal_shared(%i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_shared : memref<4xi32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.semaphore_signal' op flags must be a global tensor (other blocks read them), got 'memref<4xi32, #gpu.address_space<workgroup>>'}}
    "tile.semaphore_signal"(%f, %i) : (memref<4xi32, #gpu.address_space<workgroup>>, index) -> ()
  }
  return
}

// -----

func.func @semaphore_wait_shared(%i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_shared : memref<4xi32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.semaphore_wait' op flags must be a global tensor (other blocks read them), got 'memref<4xi32, #gpu.address_space<workgroup>>'}}
    "tile.semaphore_wait"(%f, %i) : (memref<4xi32, #gpu.address_space<workgroup>>, index) -> ()
  }
  return
}

// -----

func.func @semaphore_wait_f32(%flags: memref<?xf32>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.semaphore_wait' op operand #0 must be 1D memref of 32-bit signless integer values, but got 'memref<?xf32>'}}
    "tile.semaphore_wait"(%flags, %i) : (memref<?xf32>, index) -> ()
  }
  return
}

// -----

func.func @semaphore_level_zero(%flags: memref<?xi32>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.semaphore_signal' op raises a flag to a positive level, got 0}}
    tile.semaphore_signal %flags[%i] {level = 0 : i32} : memref<?xi32>
  }
  return
}

// -----

func.func @semaphore_wait_level_zero(%flags: memref<?xi32>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.semaphore_wait' op waits for a positive level, got 0}}
    tile.semaphore_wait %flags[%i] {level = 0 : i32} : memref<?xi32>
  }
  return
}

// -----

func.func @reduce_partials_shared(%i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<4x64xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.reduce_partials' op partials must be a global tensor, got 'memref<4x64xf32, #gpu.address_space<workgroup>>'}}
    tile.reduce_partials %s[%i] count %i slice %i : memref<4x64xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @reduce_partials_ragged_row(%partials: memref<?x6xf32>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.reduce_partials' op a row of partials must be a static number of 16-byte vectors (a multiple of 4 fp32), got 'memref<?x6xf32>'}}
    tile.reduce_partials %partials[%i] count %i slice %i : memref<?x6xf32>
  }
  return
}

// -----

func.func @reduce_partials_f16(%partials: memref<?x64xf16>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.reduce_partials' op operand #0 must be 2D memref of 32-bit float values}}
    "tile.reduce_partials"(%partials, %i, %i, %i) : (memref<?x64xf16>, index, index, index) -> ()
  }
  return
}

// -----

func.func @store_partials_shared(%partials: memref<?x8192xf32>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x128xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.store_partials' op moves the registers of a fragment, got 'memref<64x128xf32, #gpu.address_space<workgroup>>'}}
    tile.store_partials %s to %partials[%i] : memref<64x128xf32, #gpu.address_space<workgroup>> to memref<?x8192xf32>
  }
  return
}

// -----

func.func @store_partials_short_row(%partials: memref<?x4096xf32>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %acc = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.store_partials' op a row of partials holds the fragment's 8192 elements, got 'memref<?x4096xf32>'}}
    tile.store_partials %acc to %partials[%i] : memref<64x128xf32, #tile.space<fragment>> to memref<?x4096xf32>
  }
  return
}

// -----

func.func @add_partials_mismatch(%partials: memref<?x8192xf16>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %acc = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.add_partials' op partials hold 'f16' but the fragment holds 'f32'}}
    tile.add_partials %partials[%i] to %acc : memref<?x8192xf16> to memref<64x128xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @add_partials_shared_rows(%i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %p = tile.alloc_shared : memref<2x8192xf32, #gpu.address_space<workgroup>>
    %acc = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.add_partials' op partials must be a global tensor, got 'memref<2x8192xf32, #gpu.address_space<workgroup>>'}}
    tile.add_partials %p[%i] to %acc : memref<2x8192xf32, #gpu.address_space<workgroup>> to memref<64x128xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @store_partials_f16(%partials: memref<?x8192xf16>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %acc = tile.alloc_fragment : memref<64x128xf16, #tile.space<fragment>>
    // expected-error @+1 {{'tile.store_partials' op moves fp32 partial sums (16-byte vectors of four registers), got 'f16'}}
    tile.store_partials %acc to %partials[%i] : memref<64x128xf16, #tile.space<fragment>> to memref<?x8192xf16>
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// tile.ws, tile.init_barriers, tile.barrier_wait, tile.barrier_arrive
//===----------------------------------------------------------------------===//

func.func @ws_empty() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    // expected-error @+1 {{'tile.ws' op needs at least one warpgroup}}
    tile.ws warpgroups = [] {
    }
  }
  return
}

// -----

func.func @ws_not_contiguous() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 384 {
    // expected-error @+1 {{'tile.ws' op warpgroups must be ascending, contiguous and non-negative, got [0, 2]}}
    tile.ws warpgroups = [0, 2] {
    }
  }
  return
}

// -----

func.func @ws_past_block() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    // expected-error @+1 {{'tile.ws' op warpgroup 2 is past the kernel's 256 threads (2 warpgroups)}}
    tile.ws warpgroups = [2] {
    }
  }
  return
}

// -----

func.func @ws_partial_warpgroups() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 192 {
    // expected-error @+1 {{'tile.ws' op needs a block of whole warpgroups (a multiple of 128 threads), the kernel has 192}}
    tile.ws warpgroups = [0] {
    }
  }
  return
}

// -----

func.func @ws_warps_and_warpgroups() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    // expected-error @+1 {{'tile.ws' op lists either warpgroups or warps}}
    tile.ws warpgroups = [0] warps = [4] {
    }
  }
  return
}

// -----

func.func @ws_neither() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    // expected-error @+1 {{'tile.ws' op lists either warpgroups or warps}}
    tile.ws {
    }
  }
  return
}

// -----

func.func @ws_warps_not_contiguous() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 96 {
    // expected-error @+1 {{'tile.ws' op warps must be ascending, contiguous and non-negative, got [0, 2]}}
    tile.ws warps = [0, 2] {
    }
  }
  return
}

// -----

func.func @ws_warps_past_block() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 96 {
    // expected-error @+1 {{'tile.ws' op warp 3 is past the kernel's 96 threads (3 warps)}}
    tile.ws warps = [2, 3] {
    }
  }
  return
}

// -----

func.func @ws_warps_partial_warp() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 80 {
    // expected-error @+1 {{'tile.ws' op needs a block of whole warps (a multiple of 32 threads), the kernel has 80}}
    tile.ws warps = [0] {
    }
  }
  return
}

// -----

func.func @ws_nested() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    tile.ws warpgroups = [0, 1] {
      // expected-error @+1 {{'tile.ws' op cannot be nested in another tile.ws}}
      tile.ws warpgroups = [1] {
      }
    }
  }
  return
}

// -----

func.func @ws_in_pipelined() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    tile.pipelined %k = %c0 to %c8 step %c1 num_stages = 2 {
      // expected-error @+1 {{'tile.ws' op cannot be in a tile.pipelined loop: the compiler does not pipeline a loop whose warpgroups the program specializes itself}}
      tile.ws warpgroups = [1] {
      }
    }
  }
  return
}

// -----

func.func @ws_in_parallel() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    tile.parallel (%i) in [64] {
      // expected-error @+1 {{'tile.ws' op cannot be nested in a tile.parallel body}}
      tile.ws warpgroups = [1] {
      }
    }
  }
  return
}

// -----

func.func @fragment_of_two_warpgroups() {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    // expected-error @+1 {{'tile.alloc_fragment' op is used by warpgroup 0 and by warpgroup 1; a fragment lives on the threads of one T.ws (or on the whole block)}}
    %acc = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (d0 * 32 + d1)>} : memref<64x64xf32, #tile.space<fragment>>
    tile.ws warpgroups = [0] {
      // expected-note @+1 {{used by warpgroup 0 here}}
      tile.fill %acc, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
    }
    tile.ws warpgroups = [1] {
      // expected-note @+1 {{used by warpgroup 1 here}}
      tile.fill %acc, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
    }
  }
  return
}

// -----

func.func @fragment_layout_of_the_block_in_ws() {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    // expected-error @+1 {{'tile.alloc_fragment' op layout spreads over 256 threads but its warpgroups have 128}}
    %acc = tile.alloc_fragment {layout = #tile.layout<threads = 256, regs = 16, map = (d0, d1) -> (d0 * 16 + d1)>} : memref<64x64xf32, #tile.space<fragment>>
    tile.ws warpgroups = [1] {
      tile.fill %acc, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
    }
  }
  return
}

// -----

func.func @init_barriers_counts() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.init_barriers' op has 1 arrival counts for 2 barriers}}
    tile.init_barriers %bars counts = [128] : memref<2xi64, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @init_barriers_zero() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %bars = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.init_barriers' op arrival counts must be in [1, 1048575], got 0}}
    tile.init_barriers %bars counts = [0] : memref<1xi64, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @init_barriers_in_ws() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %bars = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    tile.ws warpgroups = [0] {
      // expected-error @+1 {{'tile.init_barriers' op must be directly in the kernel's body, where every thread runs it}}
      tile.init_barriers %bars counts = [128] : memref<1xi64, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

func.func @init_barriers_twice() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %bars = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.init_barriers' op initialises barriers that are initialised again elsewhere}}
    tile.init_barriers %bars counts = [128] : memref<1xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128] : memref<1xi64, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @init_barriers_global(%bars: memref<1xi64>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.init_barriers' op barriers must be a tile.alloc_shared buffer}}
    tile.init_barriers %bars counts = [128] : memref<1xi64>
  }
  return
}

// -----

func.func @barrier_wait_uninitialised(%p: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %bars = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.barrier_wait' op barriers must be initialised by tile.init_barriers}}
    tile.barrier_wait %bars[%c0], %p : memref<1xi64, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @barrier_arrive_out_of_range() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.barrier_arrive' op barrier 2 is out of range: there are 2}}
    tile.barrier_arrive %bars[%c2] : memref<2xi64, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @barrier_arrive_in_parallel() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %bars = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128] : memref<1xi64, #gpu.address_space<workgroup>>
    tile.parallel (%i) in [128] {
      // expected-error @+1 {{'tile.barrier_arrive' op runs once per thread: it cannot be in a tile.parallel body}}
      tile.barrier_arrive %bars[%c0] : memref<1xi64, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

func.func @view_size() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.view' op keeps the buffer's size: 64x32xf16 is 4096 bytes, 64x32xf32 is 8192}}
    %v = tile.view %s : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @view_between_places() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.view' op source and result must both be in shared memory or both fragments, got fragment memory and shared memory}}
    %v = tile.view %f : memref<64x32xf32, #tile.space<fragment>> to memref<2048xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @view_fragment_elements() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.view' op views a fragment with another shape of as many elements of the same type, got 'memref<64x32xf32, #tile.space<fragment>>' to 'memref<64x16xf32, #tile.space<fragment>>'}}
    %v = tile.view %f : memref<64x32xf32, #tile.space<fragment>> to memref<64x16xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @view_fragment_dtype() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.view' op views a fragment with another shape of as many elements of the same type}}
    %v = tile.view %f : memref<64x32xf32, #tile.space<fragment>> to memref<64x32xi32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @view_reducer() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %p = tile.alloc_fragment {tile.reducer, layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d0, d1)>} : memref<128x4xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.view' op views a reducer's partials (one row per thread), which have no element placement to view}}
    %v = tile.view %p : memref<128x4xf32, #tile.space<fragment>> to memref<512xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @view_of_a_stage(%i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x64x32xf16, #gpu.address_space<workgroup>>
    %one = tile.stage %all[%i] : memref<2x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.view' op source must be a tile.alloc_shared or a view of one}}
    %v = tile.view %one : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<2048xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @view_of_stages() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.view' op views a shared allocation in stages (#tile.shared<stages = 2>); a viewed allocation has none}}
    %v = tile.view %s : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<8192xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @transpose_not_bytes() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<128x128xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x128xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.transpose' op moves bytes: both buffers of one 8-bit element type, got 'f16' and 'f16'}}
    tile.transpose %a to %b : memref<128x128xf16, #gpu.address_space<workgroup>> to memref<128x128xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @transpose_shape() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<128x256xi8, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x256xi8, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.transpose' op the destination is the source's shape reversed: 128x256 to 128x256}}
    tile.transpose %a to %b : memref<128x256xi8, #gpu.address_space<workgroup>> to memref<128x256xi8, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @transpose_tiles() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x128xi8, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x64xi8, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.transpose' op takes tiles of 128 rows of whole 128-byte blocks (and one of 64 or 32 bytes): rows a multiple of 128, columns of 32, 64 or 128k (+ 32 or 64), got 64x128}}
    tile.transpose %a to %b : memref<64x128xi8, #gpu.address_space<workgroup>> to memref<128x64xi8, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @transpose_columns() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<128x96xi8, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<96x128xi8, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.transpose' op takes tiles of 128 rows of whole 128-byte blocks (and one of 64 or 32 bytes): rows a multiple of 128, columns of 32, 64 or 128k (+ 32 or 64), got 128x96}}
    tile.transpose %a to %b : memref<128x96xi8, #gpu.address_space<workgroup>> to memref<96x128xi8, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @transpose_global(%g: memref<128x128xi8>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %b = tile.alloc_shared : memref<128x128xi8, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.transpose' op transposes a shared buffer into a shared buffer, got global memory (no memory space) and shared memory}}
    tile.transpose %g to %b : memref<128x128xi8> to memref<128x128xi8, #gpu.address_space<workgroup>>
  }
  return
}

// -----

func.func @make_tensor_sizes(%a: i64, %m: index) {
  // expected-error @+1 {{'tile.make_tensor' op expected 2 sizes (one per dynamic dimension), got 1}}
  %t = tile.make_tensor %a(%m) : memref<?x?xf16>
  return
}

// -----

func.func @make_tensor_shared(%a: i64) {
  // expected-error @+1 {{'tile.make_tensor' op makes row-major global tensors, not 'memref<64xf16, #gpu.address_space<workgroup>>'}}
  %t = tile.make_tensor %a() : memref<64xf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @make_tensor_bits(%a: i64) {
  // expected-error @+1 {{'tile.make_tensor' op element type 'i4' is narrower than a byte}}
  %t = tile.make_tensor %a() : memref<64xi4>
  return
}

// -----

// More slots than iterations, but element 0 is held twice: not a padded cover.
func.func @parallel_layout_padded_twice() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.parallel' op layout does not cover the 129 loop: layout holds 256 registers in all (threads 128 x regs 2), not a multiple of the tile's 129 elements}}
    tile.parallel (%i) in [129] attributes {layout = #tile.layout<threads = 128, regs = 2, map = (d0, d1) -> ((d1 * 128 + d0) mod 130)>} {
    }
  }
  return
}
