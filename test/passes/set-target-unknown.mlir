// RUN: not tlc-opt %s --tile-target=sm_99 2>&1 | FileCheck %s
// CHECK: error: unknown target architecture 'sm_99' (known: sm_80, sm_86, sm_89, sm_90, sm_90a)
func.func @f() {
  return
}
