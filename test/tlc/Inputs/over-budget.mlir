// A kernel that asks for more shared memory than sm_90a allows per block.
func.func @big() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<256x512xf16, #gpu.address_space<workgroup>>
  }
  return
}
