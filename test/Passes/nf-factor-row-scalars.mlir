// RUN: nf-opt %s -nf-factor-row-scalars | FileCheck %s

// -nf-factor-row-scalars takes the per-row scalar factors of a product out
// of `reduce max (abs ...)`, so that the maximum no longer reads the first
// reduction's result, and folds a row times two scalars into one multiply.

// Per-token quantization after RMSNorm * w: the maximum of |x * w|, times
// |rstd|; the quantized row is x * w times rstd / scale.
// CHECK-LABEL: nf.kernel @rms_quant
// CHECK: %[[MS:.*]] = nf.reduce mean_sq %[[X:.*]] : !nf.row<f32>
// CHECK: %[[RSTD:.*]] = nf.rsqrt
// CHECK: %[[T:.*]] = nf.mul %[[X]], %[[W:.*]] : !nf.row<f32>
// CHECK-NEXT: %[[A:.*]] = nf.abs %[[T]] : !nf.row<f32>
// CHECK-NEXT: %[[M:.*]] = nf.reduce max %[[A]] : !nf.row<f32>
// CHECK-NEXT: %[[R:.*]] = nf.abs %[[RSTD]] : f32
// CHECK-NEXT: %[[AMAX:.*]] = nf.mul %[[M]], %[[R]] : f32
// CHECK: %[[SCALE:.*]] = nf.div %[[AMAX]], %{{.*}} : f32
// CHECK-NEXT: %[[K:.*]] = nf.div %[[RSTD]], %[[SCALE]] : f32
// CHECK-NEXT: %[[Q:.*]] = nf.mul %[[T]], %[[K]] : !nf.row<f32>, f32
// CHECK-NEXT: nf.return %[[Q]], %[[SCALE]]
// CHECK-NOT: nf.reduce max
nf.kernel @rms_quant(%x: tensor<?x?x?xf32>, %w: tensor<?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %wr = nf.load %w [D] : tensor<?xf32>
  %ms = nf.reduce mean_sq %xr : !nf.row<f32>
  %eps = nf.constant 1.0e-6 : f32
  %v = nf.add %ms, %eps : f32
  %rstd = nf.rsqrt %v : f32
  %n = nf.mul %xr, %rstd : !nf.row<f32>, f32
  %y = nf.mul %n, %wr : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %qmax = nf.constant 448.0 : f32
  %scale = nf.div %amax, %qmax : f32
  %q = nf.div %y, %scale : !nf.row<f32>, f32
  nf.return %q, %scale : !nf.row<f32>, f32
}

// Several scalars (their product, in the order met) and rows (likewise).
// CHECK-LABEL: nf.kernel @two_scalars
// CHECK: %[[T:.*]] = nf.mul %[[X:.*]], %[[W:.*]] : !nf.row<f32>
// CHECK-NEXT: %[[S:.*]] = nf.mul %[[S1:.*]], %[[S2:.*]] : f32
// CHECK: %[[M:.*]] = nf.reduce max %{{.*}} : !nf.row<f32>
// CHECK-NEXT: %[[R:.*]] = nf.abs %[[S]] : f32
// CHECK-NEXT: %[[AMAX:.*]] = nf.mul %[[M]], %[[R]] : f32
// CHECK-NEXT: nf.return %[[AMAX]] : f32
nf.kernel @two_scalars(%x: tensor<?x?x?xf32>, %w: tensor<?xf32>)
    -> tensor<?x?xf32> {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %wr = nf.load %w [D] : tensor<?xf32>
  %s1 = nf.reduce mean %xr : !nf.row<f32>
  %s2 = nf.reduce sum %xr : !nf.row<f32>
  %p1 = nf.mul %xr, %s1 : !nf.row<f32>, f32
  %p2 = nf.mul %p1, %wr : !nf.row<f32>
  %p3 = nf.mul %p2, %s2 : !nf.row<f32>, f32
  %a = nf.abs %p3 : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  nf.return %amax : f32
}

// Left alone: a maximum without abs (its sign matters), a product without
// a scalar, a sum, a group maximum; and a row times a scalar whose inner
// product has another use.
// CHECK-LABEL: nf.kernel @untouched
// CHECK: %[[N:.*]] = nf.mul %[[X:.*]], %[[RSTD:.*]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[M1:.*]] = nf.reduce max %[[N]] : !nf.row<f32>
// CHECK-NEXT: %[[P:.*]] = nf.mul %[[X]], %[[X]] : !nf.row<f32>
// CHECK-NEXT: %[[A:.*]] = nf.abs %[[P]] : !nf.row<f32>
// CHECK-NEXT: %[[M2:.*]] = nf.reduce max %[[A]] : !nf.row<f32>
// CHECK-NEXT: %[[AN:.*]] = nf.abs %[[N]] : !nf.row<f32>
// CHECK-NEXT: %[[S:.*]] = nf.reduce sum %[[AN]] : !nf.row<f32>
// CHECK-NEXT: %[[G:.*]] = nf.reduce max %[[AN]] group 128 : !nf.row<f32>
// CHECK-NEXT: %[[Y:.*]] = nf.mul %[[N]], %[[M1]] : !nf.row<f32>, f32
// CHECK-NEXT: nf.return %[[N]], %[[Y]], %[[M2]], %[[S]], %[[G]]
nf.kernel @untouched(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>,
        tensor<?x?xf32>, tensor<?x?x?xf32>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %ms = nf.reduce mean_sq %xr : !nf.row<f32>
  %rstd = nf.rsqrt %ms : f32
  %n = nf.mul %xr, %rstd : !nf.row<f32>, f32
  %m1 = nf.reduce max %n : !nf.row<f32>
  %p = nf.mul %xr, %xr : !nf.row<f32>
  %a = nf.abs %p : !nf.row<f32>
  %m2 = nf.reduce max %a : !nf.row<f32>
  %an = nf.abs %n : !nf.row<f32>
  %s = nf.reduce sum %an : !nf.row<f32>
  %g = nf.reduce max %an group 128 : !nf.row<f32>
  %y = nf.mul %n, %m1 : !nf.row<f32>, f32
  nf.return %n, %y, %m2, %s, %g : !nf.row<f32>, !nf.row<f32>, f32, f32,
      !nf.group<f32, 128>
}
