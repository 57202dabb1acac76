// RUN: nf-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the nfgpu dialect (NfGpuDialect.cpp), in
// the order the rules appear there.

llvm.func @no_values(%lane: i64, %row: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op needs at least one partial value}}
  "nfgpu.row_reduce"(%lane, %row) <{kinds = [], threads_per_row = 32 : i64,
      rows_per_cta = 1 : i64, cluster_size = 1 : i64, slot = 0 : i64,
      operandSegmentSizes = array<i32: 0, 1, 1, 0>}> : (i64, i64) -> ()
  llvm.return
}

// -----

llvm.func @kinds(%p: f32, %lane: i64, %row: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op has 1 partial values but 2 combining kinds; expected one kind per value}}
  %s = nfgpu.row_reduce [#nfgpu.combining<sum>, #nfgpu.combining<max>] %p
      lane %lane row %row {threads_per_row = 32 : i64, rows_per_cta = 1 : i64,
      cluster_size = 1 : i64, slot = 0 : i64} : f32
  llvm.return
}

// -----

llvm.func @exp_sum_first(%p: f32, %q: f32, %lane: i64, %row: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op value 0 is an exp_sum, which must follow a max value}}
  %s, %m = nfgpu.row_reduce [#nfgpu.combining<exp_sum>, #nfgpu.combining<max>]
      %p, %q lane %lane row %row {threads_per_row = 32 : i64,
      rows_per_cta = 1 : i64, cluster_size = 1 : i64, slot = 0 : i64} : f32, f32
  llvm.return
}

// -----

llvm.func @exp_sum_after_sum(%p: f32, %q: f32, %lane: i64, %row: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op value 1 is an exp_sum, which must follow a max value}}
  %s, %t = nfgpu.row_reduce [#nfgpu.combining<sum>, #nfgpu.combining<exp_sum>]
      %p, %q lane %lane row %row {threads_per_row = 32 : i64,
      rows_per_cta = 1 : i64, cluster_size = 1 : i64, slot = 0 : i64} : f32, f32
  llvm.return
}

// -----

llvm.func @threads(%p: f32, %lane: i64, %row: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op threads_per_row must be a power of two from 1 to 1024, got 48}}
  %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
      {threads_per_row = 48 : i64, rows_per_cta = 1 : i64,
       cluster_size = 1 : i64, slot = 0 : i64} : f32
  llvm.return
}

// -----

llvm.func @rows(%p: f32, %lane: i64, %row: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op rows_per_cta must be at least 1 and threads_per_row * rows_per_cta at most 1024, got 4 rows of 512 threads}}
  %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
      {threads_per_row = 512 : i64, rows_per_cta = 4 : i64,
       cluster_size = 1 : i64, slot = 0 : i64} : f32
  llvm.return
}

// -----

llvm.func @cluster(%p: f32, %lane: i64, %row: i64, %rank: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op cluster_size must be a power of two from 1 to 16, got 3}}
  %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
      rank %rank {threads_per_row = 512 : i64, rows_per_cta = 1 : i64,
      cluster_size = 3 : i64, slot = 0 : i64} : f32
  llvm.return
}

// -----

llvm.func @no_rank(%p: f32, %lane: i64, %row: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op spans a cluster and needs the CTA's `rank` in it}}
  %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
      {threads_per_row = 512 : i64, rows_per_cta = 1 : i64,
       cluster_size = 2 : i64, slot = 0 : i64} : f32
  llvm.return
}

// -----

llvm.func @stray_rank(%p: f32, %lane: i64, %row: i64, %rank: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op takes a `rank` only with cluster_size > 1}}
  %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
      rank %rank {threads_per_row = 512 : i64, rows_per_cta = 1 : i64,
      cluster_size = 1 : i64, slot = 0 : i64} : f32
  llvm.return
}

// -----

llvm.func @wait(%p: f32, %lane: i64, %row: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op has cluster_wait but cluster_size is 1}}
  %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
      {threads_per_row = 512 : i64, rows_per_cta = 1 : i64,
       cluster_size = 1 : i64, slot = 0 : i64, cluster_wait} : f32
  llvm.return
}

// -----

llvm.func @slot(%p: f32, %lane: i64, %row: i64) {
  // expected-error@+1 {{'nfgpu.row_reduce' op slot must be non-negative, got -1}}
  %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
      {threads_per_row = 512 : i64, rows_per_cta = 1 : i64,
       cluster_size = 1 : i64, slot = -1 : i64} : f32
  llvm.return
}

// -----

llvm.func @kind_name(%p: f32, %lane: i64, %row: i64) {
  // expected-error@+2 {{failed to parse NfGpu_CombiningKindAttr parameter 'value'}}
  // expected-error@+1 {{expected ::mlir::nfgpu::CombiningKind to be one of: sum, max}}
  %s = nfgpu.row_reduce [#nfgpu.combining<mean>] %p lane %lane row %row
      {threads_per_row = 512 : i64, rows_per_cta = 1 : i64,
       cluster_size = 1 : i64, slot = 0 : i64} : f32
  llvm.return
}

// -----

llvm.func @group_lanes(%p: f32) {
  // expected-error@+1 {{'nfgpu.group_reduce' op lanes must be a power of two from 2 to 32, found 64}}
  %s = nfgpu.group_reduce <sum> %p lanes 64 : f32
  llvm.return
}

// -----

llvm.func @group_lanes_odd(%p: f32) {
  // expected-error@+1 {{'nfgpu.group_reduce' op lanes must be a power of two from 2 to 32, found 6}}
  %s = nfgpu.group_reduce <sum> %p lanes 6 : f32
  llvm.return
}

// -----

llvm.func @group_exp_sum(%p: f32) {
  // expected-error@+1 {{'nfgpu.group_reduce' op combines sums or maxima, not exp_sum}}
  %s = nfgpu.group_reduce <exp_sum> %p lanes 8 : f32
  llvm.return
}
