// RUN: nf-opt %s -nf-allow-contraction -split-input-file | FileCheck %s

// Inside a gpu.module, multiplies, adds and subtractions may contract (LLVM
// then fuses a multiply and the add that consumes it into one fma); flags
// already there are kept. A division keeps its own rounding, and code
// outside the gpu.module is not touched.
// CHECK-LABEL: gpu.func @k(
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : vector<8xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<contract> : vector<8xf32>
// CHECK: arith.subf %{{.*}}, %{{.*}} fastmath<nnan,contract> : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-LABEL: llvm.func @host(
// CHECK: arith.mulf %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : f32
// CHECK-NOT: fastmath
module attributes {gpu.container_module} {
  gpu.module @nf_kernels {
    gpu.func @k(%x: vector<8xf32>, %w: vector<8xf32>, %b: vector<8xf32>,
                %s: f32, %t: f32) kernel {
      %p = arith.mulf %x, %w : vector<8xf32>
      %y = arith.addf %p, %b : vector<8xf32>
      %d = arith.subf %s, %t fastmath<nnan> : f32
      %q = arith.divf %d, %t : f32
      gpu.return
    }
  }
  llvm.func @host(%a: f32, %b: f32) -> f32 {
    %p = arith.mulf %a, %b : f32
    llvm.return %p : f32
  }
}

// -----

// The function of a streamed variant (chunks_per_thread = 0 in its
// schedule) is left alone; the register-resident one contracts.
// CHECK-LABEL: gpu.func @rms_v0_warp32x2(
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK-LABEL: gpu.func @rms_g1_streaming32(
// CHECK: arith.mulf %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : f32
// CHECK-NOT: fastmath
module attributes {gpu.container_module} {
  nf.kernel @rms(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
      attributes {nf.variants = [
        #nf.variant<name = "v0_warp32x2", vectorized = true, max_d = 256,
          schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 4, chunks_per_thread = 2>>,
        #nf.variant<name = "g1_streaming32", vectorized = false, max_d = 0,
          schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 1, chunks_per_thread = 0>>]} {
    %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
    nf.return %xf : !nf.row<f32>
  }
  gpu.module @nf_kernels {
    gpu.func @rms_v0_warp32x2(%a: f32, %b: f32) kernel {
      %p = arith.mulf %a, %b : f32
      gpu.return
    }
    gpu.func @rms_g1_streaming32(%a: f32, %b: f32) kernel {
      %p = arith.mulf %a, %b : f32
      gpu.return
    }
  }
}
