// RUN: nf-opt %s | nf-opt | FileCheck %s

// The GPU level's ops print as they parse.
// CHECK-LABEL: gpu.func @exchanges(
// CHECK: nfgpu.cluster_arrive %{{.*}}
// CHECK: %{{.*}}:2 = nfgpu.row_reduce [#nfgpu.combining<sum>, #nfgpu.combining<max>] %{{.*}}, %{{.*}} lane %{{.*}} row %{{.*}} rank %{{.*}} {cluster_size = 4 : i64, cluster_wait, rows_per_cta = 1 : i64, slot = 0 : i64, threads_per_row = 256 : i64} : f32, f32
// CHECK: nfgpu.row_reduce [#nfgpu.combining<sum>] %{{.*}} lane %{{.*}} row %{{.*}} rank %{{.*}} {cluster_size = 4 : i64, rows_per_cta = 1 : i64, slot = 2 : i64, threads_per_row = 256 : i64} : f32
// CHECK: %{{.*}}:2 = nfgpu.row_reduce [#nfgpu.combining<max>, #nfgpu.combining<exp_sum>] %{{.*}}, %{{.*}} lane %{{.*}} row %{{.*}} rank %{{.*}} {cluster_size = 4 : i64, rows_per_cta = 1 : i64, slot = 3 : i64, threads_per_row = 256 : i64} : f32, f32
// CHECK: nfgpu.group_reduce <max> %{{.*}} lanes 8 : f32
// CHECK: nfgpu.group_reduce <sum> %{{.*}} lanes 4 warp_lane %{{.*}} : f32
module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @exchanges(%a: f32, %m: f32, %lane: i64, %row: i64, %rank: i64,
                      %tid: i32) kernel {
    nfgpu.cluster_arrive %tid
    %s, %x = nfgpu.row_reduce [#nfgpu.combining<sum>, #nfgpu.combining<max>]
        %a, %m lane %lane row %row rank %rank
        {threads_per_row = 256 : i64, rows_per_cta = 1 : i64,
         cluster_size = 4 : i64, slot = 0 : i64, cluster_wait} : f32, f32
    %t = nfgpu.row_reduce [#nfgpu.combining<sum>] %s lane %lane row %row
        rank %rank {threads_per_row = 256 : i64, rows_per_cta = 1 : i64,
        cluster_size = 4 : i64, slot = 2 : i64} : f32
    %mx, %e = nfgpu.row_reduce [#nfgpu.combining<max>,
                                #nfgpu.combining<exp_sum>] %t, %a
        lane %lane row %row rank %rank
        {threads_per_row = 256 : i64, rows_per_cta = 1 : i64,
         cluster_size = 4 : i64, slot = 3 : i64} : f32, f32
    %g = nfgpu.group_reduce <max> %a lanes 8 : f32
    %h = nfgpu.group_reduce <sum> %g lanes 4 warp_lane %tid : f32
    gpu.return
  }
}
}
