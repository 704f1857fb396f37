// RUN: tlc-opt %s -split-input-file '-tile-set-target=arch=sm_90a' -verify-diagnostics | FileCheck %s
// RUN: tlc-opt %s -split-input-file --tile-target=sm_90a -verify-diagnostics | FileCheck %s

// CHECK: module attributes {tile.target = #tile.target<"sm_90a">}
// CHECK-LABEL: func.func @plain
func.func @plain() {
  return
}

// -----

// A module for the same architecture keeps its narrowed features and limits.
// CHECK: module attributes {tile.target = #tile.target<"sm_90a", features = [cp_async, mma_sync], shared = 49152>}
// CHECK-LABEL: func.func @narrowed
module attributes {tile.target = #tile.target<"sm_90a", features = [cp_async, mma_sync], shared = 49152>} {
func.func @narrowed() {
  return
}
}

// -----

// expected-error @+1 {{the module is for sm_80 but the target asked for is sm_90a}}
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @other_arch() {
  return
}
}
