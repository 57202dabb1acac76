// RUN: nf-opt %s -nf-decompose | FileCheck %s
// RUN: nf-opt %s -nf-decompose | FileCheck %s --check-prefix=NOCOMPOSITE

// -nf-decompose rewrites layer_norm, rms_norm and modulate into casts,
// reductions and elementwise ops, computing in f32. Constants (eps, 1.0) are
// f32 whatever the row type; the checks do not pin where they are placed.

// NOCOMPOSITE-NOT: nf.layer_norm
// NOCOMPOSITE-NOT: nf.rms_norm
// NOCOMPOSITE-NOT: nf.modulate

// LayerNorm: mean, centre, variance as mean_sq of the *centred* row (two
// passes, never E[x^2] - E[x]^2), + eps, rsqrt, scale the centred row. An f32
// row needs no cast.
// CHECK-LABEL: nf.kernel @layer_norm
// CHECK-DAG: %[[EPS:.*]] = nf.constant 9.99999997E-7 : f32
// CHECK-DAG: %[[X:.*]] = nf.load %x [B, S, D]
// CHECK: %[[MEAN:.*]] = nf.reduce mean %[[X]] : !nf.row<f32>
// CHECK-NEXT: %[[C:.*]] = nf.sub %[[X]], %[[MEAN]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[VAR:.*]] = nf.reduce mean_sq %[[C]] : !nf.row<f32>
// CHECK-NEXT: %[[V:.*]] = nf.add %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT: %[[RSTD:.*]] = nf.rsqrt %[[V]] : f32
// CHECK-NEXT: %[[Y:.*]] = nf.mul %[[C]], %[[RSTD]] : !nf.row<f32>, f32
// CHECK-NEXT: nf.return %[[Y]] : !nf.row<f32>
nf.kernel @layer_norm(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.layer_norm %0 eps 1.0e-6 : !nf.row<f32>
  nf.return %1 : !nf.row<f32>
}

// Weight then bias, after normalization.
// CHECK-LABEL: nf.kernel @layer_norm_affine
// CHECK-DAG: %[[EPS:.*]] = nf.constant 9.99999974E-6 : f32
// CHECK-DAG: %[[X:.*]] = nf.load %x [B, S, D]
// CHECK-DAG: %[[W:.*]] = nf.load %w [D]
// CHECK-DAG: %[[B:.*]] = nf.load %b [D]
// CHECK: %[[MEAN:.*]] = nf.reduce mean %[[X]]
// CHECK-NEXT: %[[C:.*]] = nf.sub %[[X]], %[[MEAN]]
// CHECK-NEXT: %[[VAR:.*]] = nf.reduce mean_sq %[[C]]
// CHECK-NEXT: %[[V:.*]] = nf.add %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT: %[[RSTD:.*]] = nf.rsqrt %[[V]] : f32
// CHECK-NEXT: %[[N:.*]] = nf.mul %[[C]], %[[RSTD]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[NW:.*]] = nf.mul %[[N]], %[[W]] : !nf.row<f32>
// CHECK-NEXT: %[[NB:.*]] = nf.add %[[NW]], %[[B]] : !nf.row<f32>
// CHECK-NEXT: nf.return %[[NB]]
nf.kernel @layer_norm_affine(%x: tensor<?x?x?xf32>, %w: tensor<?xf32>,
                             %b: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %w [D] : tensor<?xf32>
  %2 = nf.load %b [D] : tensor<?xf32>
  %3 = nf.layer_norm %0 weight %1 bias %2 eps 1.0e-5 : !nf.row<f32>
  nf.return %3 : !nf.row<f32>
}

// A bias without a weight is added directly.
// CHECK-LABEL: nf.kernel @layer_norm_bias_only
// CHECK: %[[N:.*]] = nf.mul %{{.*}}, %{{.*}} : !nf.row<f32>, f32
// CHECK-NEXT: %[[NB:.*]] = nf.add %[[N]], %{{.*}} : !nf.row<f32>
// CHECK-NEXT: nf.return %[[NB]]
nf.kernel @layer_norm_bias_only(%x: tensor<?x?x?xf32>, %b: tensor<?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %b [D] : tensor<?xf32>
  %2 = nf.layer_norm %0 bias %1 eps 1.0e-6 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// RMSNorm: mean_sq of the row itself, + eps, rsqrt, scale, weight.
// CHECK-LABEL: nf.kernel @rms_norm
// CHECK-DAG: %[[EPS:.*]] = nf.constant 9.99999997E-7 : f32
// CHECK-DAG: %[[X:.*]] = nf.load %x [B, S, D]
// CHECK-DAG: %[[W:.*]] = nf.load %w [D]
// CHECK: %[[MS:.*]] = nf.reduce mean_sq %[[X]] : !nf.row<f32>
// CHECK-NEXT: %[[V:.*]] = nf.add %[[MS]], %[[EPS]] : f32
// CHECK-NEXT: %[[RSTD:.*]] = nf.rsqrt %[[V]] : f32
// CHECK-NEXT: %[[N:.*]] = nf.mul %[[X]], %[[RSTD]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[MS2:.*]] = nf.reduce mean_sq %[[X]] : !nf.row<f32>
// CHECK-NEXT: %[[V2:.*]] = nf.add %[[MS2]], %{{.*}} : f32
// CHECK-NEXT: %[[RSTD2:.*]] = nf.rsqrt %[[V2]] : f32
// CHECK-NEXT: %[[N2:.*]] = nf.mul %[[X]], %[[RSTD2]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[NW:.*]] = nf.mul %[[N2]], %[[W]] : !nf.row<f32>
// CHECK-NEXT: nf.return %[[N]], %[[NW]]
nf.kernel @rms_norm(%x: tensor<?x?x?xf32>, %w: tensor<?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %w [D] : tensor<?xf32>
  %2 = nf.rms_norm %0 eps 1.0e-6 : !nf.row<f32>
  %3 = nf.rms_norm %0 weight %1 eps 1.0e-6 : !nf.row<f32>
  nf.return %2, %3 : !nf.row<f32>, !nf.row<f32>
}

// Modulation: x * (scale + 1) + shift.
// CHECK-LABEL: nf.kernel @modulate
// CHECK-DAG: %[[ONE:.*]] = nf.constant 1.000000e+00 : f32
// CHECK-DAG: %[[X:.*]] = nf.load %x [B, S, D]
// CHECK-DAG: %[[SC:.*]] = nf.load %scale [B, 1, D]
// CHECK-DAG: %[[SH:.*]] = nf.load %shift [B, 1, D]
// CHECK: %[[S1:.*]] = nf.add %[[SC]], %[[ONE]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[M:.*]] = nf.mul %[[X]], %[[S1]] : !nf.row<f32>
// CHECK-NEXT: %[[Y:.*]] = nf.add %[[M]], %[[SH]] : !nf.row<f32>
// CHECK-NEXT: nf.return %[[Y]]
nf.kernel @modulate(%x: tensor<?x?x?xf32>, %scale: tensor<?x1x?xf32>,
                    %shift: tensor<?x1x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %2 = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %3 = nf.modulate %0, %1, %2 : !nf.row<f32>
  nf.return %3 : !nf.row<f32>
}

// A bf16 composite widens its operands to f32 (exact), computes in f32 and
// rounds its result once, back to bf16.
// CHECK-LABEL: nf.kernel @rms_norm_bf16
// CHECK-DAG: %[[EPS:.*]] = nf.constant 9.99999997E-7 : f32
// CHECK-DAG: %[[X:.*]] = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
// CHECK-DAG: %[[W:.*]] = nf.load %w [D] : tensor<?xbf16>
// CHECK: %[[XF:.*]] = nf.cast %[[X]] : !nf.row<bf16> to !nf.row<f32>
// CHECK-NEXT: %[[MS:.*]] = nf.reduce mean_sq %[[XF]] : !nf.row<f32>
// CHECK-NEXT: %[[V:.*]] = nf.add %[[MS]], %[[EPS]] : f32
// CHECK-NEXT: %[[RSTD:.*]] = nf.rsqrt %[[V]] : f32
// CHECK-NEXT: %[[N:.*]] = nf.mul %[[XF]], %[[RSTD]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[WF:.*]] = nf.cast %[[W]] : !nf.row<bf16> to !nf.row<f32>
// CHECK-NEXT: %[[NW:.*]] = nf.mul %[[N]], %[[WF]] : !nf.row<f32>
// CHECK-NEXT: %[[Y:.*]] = nf.cast %[[NW]] : !nf.row<f32> to !nf.row<bf16>
// CHECK-NEXT: nf.return %[[Y]] : !nf.row<bf16>
nf.kernel @rms_norm_bf16(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> tensor<?x?x?xbf16> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %1 = nf.load %w [D] : tensor<?xbf16>
  %2 = nf.rms_norm %0 weight %1 eps 1.0e-6 : !nf.row<bf16>
  nf.return %2 : !nf.row<bf16>
}

// CHECK-LABEL: nf.kernel @layer_norm_f16
// CHECK: %[[XF:.*]] = nf.cast %{{.*}} : !nf.row<f16> to !nf.row<f32>
// CHECK-NEXT: %[[MEAN:.*]] = nf.reduce mean %[[XF]] : !nf.row<f32>
// CHECK-NEXT: %[[C:.*]] = nf.sub %[[XF]], %[[MEAN]] : !nf.row<f32>, f32
// CHECK-NEXT: nf.reduce mean_sq %[[C]] : !nf.row<f32>
// CHECK: %[[BF:.*]] = nf.cast %{{.*}} : !nf.row<f16> to !nf.row<f32>
// CHECK-NEXT: %[[NB:.*]] = nf.add %{{.*}}, %[[BF]] : !nf.row<f32>
// CHECK-NEXT: %[[Y:.*]] = nf.cast %[[NB]] : !nf.row<f32> to !nf.row<f16>
// CHECK-NEXT: nf.return %[[Y]] : !nf.row<f16>
nf.kernel @layer_norm_f16(%x: tensor<?x?x?xf16>, %b: tensor<?xf16>)
    -> tensor<?x?x?xf16> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf16>
  %1 = nf.load %b [D] : tensor<?xf16>
  %2 = nf.layer_norm %0 bias %1 eps 1.0e-6 : !nf.row<f16>
  nf.return %2 : !nf.row<f16>
}

// CHECK-LABEL: nf.kernel @modulate_bf16
// CHECK-DAG: %[[ONE:.*]] = nf.constant 1.000000e+00 : f32
// CHECK-DAG: %[[X:.*]] = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
// CHECK-DAG: %[[SC:.*]] = nf.load %scale [B, 1, D] : tensor<?x1x?xbf16>
// CHECK-DAG: %[[SH:.*]] = nf.load %shift [B, 1, D] : tensor<?x1x?xbf16>
// CHECK: %[[SCF:.*]] = nf.cast %[[SC]] : !nf.row<bf16> to !nf.row<f32>
// CHECK-NEXT: %[[S1:.*]] = nf.add %[[SCF]], %[[ONE]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[XF:.*]] = nf.cast %[[X]] : !nf.row<bf16> to !nf.row<f32>
// CHECK-NEXT: %[[M:.*]] = nf.mul %[[XF]], %[[S1]] : !nf.row<f32>
// CHECK-NEXT: %[[SHF:.*]] = nf.cast %[[SH]] : !nf.row<bf16> to !nf.row<f32>
// CHECK-NEXT: %[[A:.*]] = nf.add %[[M]], %[[SHF]] : !nf.row<f32>
// CHECK-NEXT: %[[Y:.*]] = nf.cast %[[A]] : !nf.row<f32> to !nf.row<bf16>
// CHECK-NEXT: nf.return %[[Y]] : !nf.row<bf16>
nf.kernel @modulate_bf16(%x: tensor<?x?x?xbf16>, %scale: tensor<?x1x?xbf16>,
                         %shift: tensor<?x1x?xbf16>) -> tensor<?x?x?xbf16> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %1 = nf.load %scale [B, 1, D] : tensor<?x1x?xbf16>
  %2 = nf.load %shift [B, 1, D] : tensor<?x1x?xbf16>
  %3 = nf.modulate %0, %1, %2 : !nf.row<bf16>
  nf.return %3 : !nf.row<bf16>
}

// Primitives (and rope) are left alone; there is nothing to decompose.
// CHECK-LABEL: nf.kernel @primitives
// CHECK-NEXT: %[[X:.*]] = nf.load %q [B, S, D]
// CHECK-NEXT: %[[T:.*]] = nf.tanh %[[X]] : !nf.row<f32>
// CHECK-NEXT: %[[R:.*]] = nf.rope neox %[[T]], %cs[%pos] rotary 128
// CHECK-NEXT: nf.return %[[R]]
nf.kernel @primitives(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                      %pos: tensor<?xi64>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  %1 = nf.tanh %0 : !nf.row<f32>
  %2 = nf.rope neox %1, %cs[%pos] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  nf.return %2 : !nf.row<f32>
}
