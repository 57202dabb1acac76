// RUN: nf-opt %s | nf-opt | FileCheck %s
// RUN: nf-opt %s --mlir-print-op-generic | nf-opt | FileCheck %s

// Every op and every form of the custom syntax, printed, re-parsed and
// printed again; the second RUN line goes through the generic form. Argument
// names are kept (arg_names), so the checks name arguments literally.

// Every broadcast kind of nf.load; a row returned unchanged.
// CHECK-LABEL: nf.kernel @broadcast_kinds
// CHECK-SAME: (%one: tensor<1xf32>, %vec: tensor<?xf32>, %bd: tensor<?x?xf32>, %b1d: tensor<?x1x?xf32>, %bsd: tensor<?x?x?xf32>, %bf1d: tensor<?x?x1x?xf32>) -> tensor<?x?x?xf32>
// CHECK-NEXT: %[[ONE:.*]] = nf.load %one [1] : tensor<1xf32>
// CHECK-NEXT: %[[VEC:.*]] = nf.load %vec [D] : tensor<?xf32>
// CHECK-NEXT: %[[BD:.*]] = nf.load %bd [B, D] : tensor<?x?xf32>
// CHECK-NEXT: %[[B1D:.*]] = nf.load %b1d [B, 1, D] : tensor<?x1x?xf32>
// CHECK-NEXT: %[[BSD:.*]] = nf.load %bsd [B, S, D] : tensor<?x?x?xf32>
// CHECK-NEXT: %[[BF1D:.*]] = nf.load %bf1d [B, F, 1, D] : tensor<?x?x1x?xf32>
// CHECK-NEXT: %[[S0:.*]] = nf.add %[[ONE]], %[[VEC]] : !nf.row<f32>
// CHECK-NEXT: %[[S1:.*]] = nf.add %[[S0]], %[[BD]] : !nf.row<f32>
// CHECK-NEXT: %[[S2:.*]] = nf.add %[[S1]], %[[B1D]] : !nf.row<f32>
// CHECK-NEXT: %[[S3:.*]] = nf.add %[[S2]], %[[BSD]] : !nf.row<f32>
// CHECK-NEXT: %[[S4:.*]] = nf.add %[[S3]], %[[BF1D]] : !nf.row<f32>
// CHECK-NEXT: nf.return %[[S4]] : !nf.row<f32>
nf.kernel @broadcast_kinds(%one: tensor<1xf32>, %vec: tensor<?xf32>,
                           %bd: tensor<?x?xf32>, %b1d: tensor<?x1x?xf32>,
                           %bsd: tensor<?x?x?xf32>, %bf1d: tensor<?x?x1x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %one [1] : tensor<1xf32>
  %1 = nf.load %vec [D] : tensor<?xf32>
  %2 = nf.load %bd [B, D] : tensor<?x?xf32>
  %3 = nf.load %b1d [B, 1, D] : tensor<?x1x?xf32>
  %4 = nf.load %bsd [B, S, D] : tensor<?x?x?xf32>
  %5 = nf.load %bf1d [B, F, 1, D] : tensor<?x?x1x?xf32>
  %6 = nf.add %0, %1 : !nf.row<f32>
  %7 = nf.add %6, %2 : !nf.row<f32>
  %8 = nf.add %7, %3 : !nf.row<f32>
  %9 = nf.add %8, %4 : !nf.row<f32>
  %10 = nf.add %9, %5 : !nf.row<f32>
  nf.return %10 : !nf.row<f32>
}

// Static sizes, every element type, and an unused argument.
// CHECK-LABEL: nf.kernel @static_shapes
// CHECK-SAME: (%x: tensor<2x4096x3072xbf16>, %h: tensor<2x1x3072xf16>, %unused: tensor<7xf32>) -> (tensor<2x4096x3072xbf16>, tensor<2x4096x3072xf16>)
// CHECK-NEXT: nf.load %x [B, S, D] : tensor<2x4096x3072xbf16>
// CHECK-NEXT: nf.load %h [B, 1, D] : tensor<2x1x3072xf16>
nf.kernel @static_shapes(%x: tensor<2x4096x3072xbf16>,
                         %h: tensor<2x1x3072xf16>, %unused: tensor<7xf32>)
    -> (tensor<2x4096x3072xbf16>, tensor<2x4096x3072xf16>) {
  %0 = nf.load %x [B, S, D] : tensor<2x4096x3072xbf16>
  %1 = nf.load %h [B, 1, D] : tensor<2x1x3072xf16>
  nf.return %0, %1 : !nf.row<bf16>, !nf.row<f16>
}

// Every reduction kind; a per-row scalar broadcast back over the row.
// CHECK-LABEL: nf.kernel @reductions
// CHECK: %[[X:.*]] = nf.load %x [B, S, D]
// CHECK-NEXT: %[[SUM:.*]] = nf.reduce sum %[[X]] : !nf.row<f32>
// CHECK-NEXT: %[[MAX:.*]] = nf.reduce max %[[X]] : !nf.row<f32>
// CHECK-NEXT: %[[MEAN:.*]] = nf.reduce mean %[[X]] : !nf.row<f32>
// CHECK-NEXT: %[[MSQ:.*]] = nf.reduce mean_sq %[[X]] : !nf.row<f32>
// CHECK-NEXT: nf.add %[[SUM]], %[[MAX]] : f32
// CHECK-NEXT: nf.add %[[MEAN]], %[[MSQ]] : f32
nf.kernel @reductions(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %x0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %sum = nf.reduce sum %x0 : !nf.row<f32>
  %max = nf.reduce max %x0 : !nf.row<f32>
  %mean = nf.reduce mean %x0 : !nf.row<f32>
  %msq = nf.reduce mean_sq %x0 : !nf.row<f32>
  %a = nf.add %sum, %max : f32
  %b = nf.add %mean, %msq : f32
  %c = nf.mul %a, %b : f32
  %y = nf.sub %x0, %c : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}

// Every unary op, on rows and on per-row scalars.
// CHECK-LABEL: nf.kernel @unary
// CHECK: %[[X:.*]] = nf.load %x [B, S, D]
// CHECK-NEXT: %[[NEG:.*]] = nf.neg %[[X]] : !nf.row<f32>
// CHECK-NEXT: %[[ABS:.*]] = nf.abs %[[NEG]] : !nf.row<f32>
// CHECK-NEXT: %[[EXP:.*]] = nf.exp %[[ABS]] : !nf.row<f32>
// CHECK-NEXT: %[[TANH:.*]] = nf.tanh %[[EXP]] : !nf.row<f32>
// CHECK-NEXT: %[[SIG:.*]] = nf.sigmoid %[[TANH]] : !nf.row<f32>
// CHECK-NEXT: %[[SQRT:.*]] = nf.sqrt %[[SIG]] : !nf.row<f32>
// CHECK-NEXT: %[[RSQRT:.*]] = nf.rsqrt %[[SQRT]] : !nf.row<f32>
// CHECK-NEXT: %[[M:.*]] = nf.reduce max %[[RSQRT]] : !nf.row<f32>
// CHECK-NEXT: nf.neg %[[M]] : f32
// CHECK-NEXT: nf.abs %{{.*}} : f32
// CHECK-NEXT: nf.exp %{{.*}} : f32
// CHECK-NEXT: nf.tanh %{{.*}} : f32
// CHECK-NEXT: nf.sigmoid %{{.*}} : f32
// CHECK-NEXT: nf.sqrt %{{.*}} : f32
// CHECK-NEXT: nf.rsqrt %{{.*}} : f32
// CHECK: nf.tanh %{{.*}} : !nf.row<bf16>
// CHECK: nf.exp %{{.*}} : !nf.row<f16>
nf.kernel @unary(%x: tensor<?x?x?xf32>, %xb: tensor<?x?x?xbf16>,
                 %xh: tensor<?x?x?xf16>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xbf16>, tensor<?x?x?xf16>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.neg %0 : !nf.row<f32>
  %2 = nf.abs %1 : !nf.row<f32>
  %3 = nf.exp %2 : !nf.row<f32>
  %4 = nf.tanh %3 : !nf.row<f32>
  %5 = nf.sigmoid %4 : !nf.row<f32>
  %6 = nf.sqrt %5 : !nf.row<f32>
  %7 = nf.rsqrt %6 : !nf.row<f32>
  %m = nf.reduce max %7 : !nf.row<f32>
  %s1 = nf.neg %m : f32
  %s2 = nf.abs %s1 : f32
  %s3 = nf.exp %s2 : f32
  %s4 = nf.tanh %s3 : f32
  %s5 = nf.sigmoid %s4 : f32
  %s6 = nf.sqrt %s5 : f32
  %s7 = nf.rsqrt %s6 : f32
  %y = nf.mul %7, %s7 : !nf.row<f32>, f32
  %b = nf.load %xb [B, S, D] : tensor<?x?x?xbf16>
  %bt = nf.tanh %b : !nf.row<bf16>
  %h = nf.load %xh [B, S, D] : tensor<?x?x?xf16>
  %he = nf.exp %h : !nf.row<f16>
  nf.return %y, %bt, %he : !nf.row<f32>, !nf.row<bf16>, !nf.row<f16>
}

// Every binary op, with rows and scalars on either side; one type is printed
// when both operands have it.
// CHECK-LABEL: nf.kernel @binary
// CHECK: %[[A:.*]] = nf.load %a [B, S, D]
// CHECK-NEXT: %[[B:.*]] = nf.load %b [B, S, D]
// CHECK-NEXT: %[[S:.*]] = nf.reduce mean %[[A]] : !nf.row<f32>
// CHECK-NEXT: %[[ADD:.*]] = nf.add %[[A]], %[[B]] : !nf.row<f32>
// CHECK-NEXT: %[[SUB:.*]] = nf.sub %[[ADD]], %[[S]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[MUL:.*]] = nf.mul %[[S]], %[[SUB]] : f32, !nf.row<f32>
// CHECK-NEXT: %[[DIV:.*]] = nf.div %[[MUL]], %[[B]] : !nf.row<f32>
// CHECK-NEXT: %[[MAX:.*]] = nf.max %[[DIV]], %[[S]] : !nf.row<f32>, f32
// CHECK-NEXT: %[[MIN:.*]] = nf.min %[[S]], %[[MAX]] : f32, !nf.row<f32>
// CHECK-NEXT: %[[SS0:.*]] = nf.add %[[S]], %[[S]] : f32
// CHECK-NEXT: %[[SS1:.*]] = nf.sub %[[SS0]], %[[S]] : f32
// CHECK-NEXT: %[[SS2:.*]] = nf.mul %[[SS1]], %[[S]] : f32
// CHECK-NEXT: %[[SS3:.*]] = nf.div %[[SS2]], %[[S]] : f32
// CHECK-NEXT: %[[SS4:.*]] = nf.max %[[SS3]], %[[S]] : f32
// CHECK-NEXT: %[[SS5:.*]] = nf.min %[[SS4]], %[[S]] : f32
// CHECK-NEXT: nf.div %[[MIN]], %[[SS5]] : !nf.row<f32>, f32
// CHECK: nf.mul %{{.*}}, %{{.*}} : !nf.row<bf16>
nf.kernel @binary(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>,
                  %c: tensor<?x?x?xbf16>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xbf16>) {
  %a0 = nf.load %a [B, S, D] : tensor<?x?x?xf32>
  %b0 = nf.load %b [B, S, D] : tensor<?x?x?xf32>
  %s = nf.reduce mean %a0 : !nf.row<f32>
  %0 = nf.add %a0, %b0 : !nf.row<f32>
  %1 = nf.sub %0, %s : !nf.row<f32>, f32
  %2 = nf.mul %s, %1 : f32, !nf.row<f32>
  %3 = nf.div %2, %b0 : !nf.row<f32>
  %4 = nf.max %3, %s : !nf.row<f32>, f32
  %5 = nf.min %s, %4 : f32, !nf.row<f32>
  %t0 = nf.add %s, %s : f32
  %t1 = nf.sub %t0, %s : f32
  %t2 = nf.mul %t1, %s : f32
  %t3 = nf.div %t2, %s : f32
  %t4 = nf.max %t3, %s : f32
  %t5 = nf.min %t4, %s : f32
  %y = nf.div %5, %t5 : !nf.row<f32>, f32
  %c0 = nf.load %c [B, S, D] : tensor<?x?x?xbf16>
  %c1 = nf.mul %c0, %c0 : !nf.row<bf16>
  nf.return %y, %c1 : !nf.row<f32>, !nf.row<bf16>
}

// Constants of every float type (a constant is the same for every row) and
// casts between every pair of types, rows and scalars.
// CHECK-LABEL: nf.kernel @constants_and_casts
// CHECK-DAG: %[[C32:.*]] = nf.constant 1.000000e+00 : f32
// CHECK-DAG: %[[C16:.*]] = nf.constant -2.500000e-01 : f16
// CHECK-DAG: %[[CBF:.*]] = nf.constant 3.000000e+00 : bf16
// CHECK: %[[X:.*]] = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
// CHECK-NEXT: %[[XF:.*]] = nf.cast %[[X]] : !nf.row<bf16> to !nf.row<f32>
// CHECK-NEXT: %[[XH:.*]] = nf.cast %[[XF]] : !nf.row<f32> to !nf.row<f16>
// CHECK-NEXT: %[[XB:.*]] = nf.cast %[[XH]] : !nf.row<f16> to !nf.row<bf16>
// CHECK-NEXT: nf.cast %[[C16]] : f16 to f32
// CHECK-NEXT: nf.cast %[[C32]] : f32 to bf16
// CHECK-NEXT: nf.cast %[[CBF]] : bf16 to f16
nf.kernel @constants_and_casts(%x: tensor<?x?x?xbf16>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xbf16>, tensor<?x?x?xf16>) {
  %c32 = nf.constant 1.0 : f32
  %c16 = nf.constant -0.25 : f16
  %cbf = nf.constant 3.0 : bf16
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %1 = nf.cast %0 : !nf.row<bf16> to !nf.row<f32>
  %2 = nf.cast %1 : !nf.row<f32> to !nf.row<f16>
  %3 = nf.cast %2 : !nf.row<f16> to !nf.row<bf16>
  %4 = nf.cast %c16 : f16 to f32
  %5 = nf.cast %c32 : f32 to bf16
  %6 = nf.cast %cbf : bf16 to f16
  %y0 = nf.add %1, %4 : !nf.row<f32>, f32
  %y1 = nf.mul %3, %5 : !nf.row<bf16>, bf16
  %y2 = nf.sub %2, %6 : !nf.row<f16>, f16
  nf.return %y0, %y1, %y2 : !nf.row<f32>, !nf.row<bf16>, !nf.row<f16>
}

// Both norms with no affine, weight only, bias only, weight and bias, and on
// narrow rows (the composite computes in f32 and rounds once).
// CHECK-LABEL: nf.kernel @norms
// CHECK: %[[X:.*]] = nf.load %x [B, S, D]
// CHECK-NEXT: %[[W:.*]] = nf.load %w [D]
// CHECK-NEXT: %[[B:.*]] = nf.load %b [D]
// CHECK-NEXT: %[[L0:.*]] = nf.layer_norm %[[X]] eps 9.99999997E-7 : !nf.row<f32>
// CHECK-NEXT: %[[L1:.*]] = nf.layer_norm %[[L0]] weight %[[W]] eps 9.99999974E-6 : !nf.row<f32>
// CHECK-NEXT: %[[L2:.*]] = nf.layer_norm %[[L1]] bias %[[B]] eps 0.000000e+00 : !nf.row<f32>
// CHECK-NEXT: %[[L3:.*]] = nf.layer_norm %[[L2]] weight %[[W]] bias %[[B]] eps 9.99999997E-7 : !nf.row<f32>
// CHECK-NEXT: %[[R0:.*]] = nf.rms_norm %[[L3]] eps 9.99999997E-7 : !nf.row<f32>
// CHECK-NEXT: %[[R1:.*]] = nf.rms_norm %[[R0]] weight %[[W]] eps 9.99999997E-7 : !nf.row<f32>
// CHECK-NEXT: %[[R2:.*]] = nf.rms_norm %[[R1]] bias %[[B]] eps 9.99999997E-7 : !nf.row<f32>
// CHECK-NEXT: nf.rms_norm %[[R2]] weight %[[W]] bias %[[B]] eps 9.99999997E-7 : !nf.row<f32>
// CHECK: nf.layer_norm %{{.*}} weight %{{.*}} eps 9.99999997E-7 : !nf.row<bf16>
// CHECK: nf.rms_norm %{{.*}} eps 9.99999997E-7 : !nf.row<f16>
nf.kernel @norms(%x: tensor<?x?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>,
                 %xb: tensor<?x?x?xbf16>, %wb: tensor<?xbf16>,
                 %xh: tensor<?x?x?xf16>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xbf16>, tensor<?x?x?xf16>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %w [D] : tensor<?xf32>
  %2 = nf.load %b [D] : tensor<?xf32>
  %3 = nf.layer_norm %0 eps 1.0e-6 : !nf.row<f32>
  %4 = nf.layer_norm %3 weight %1 eps 1.0e-5 : !nf.row<f32>
  %5 = nf.layer_norm %4 bias %2 eps 0.0 : !nf.row<f32>
  %6 = nf.layer_norm %5 weight %1 bias %2 eps 1.0e-6 : !nf.row<f32>
  %7 = nf.rms_norm %6 eps 1.0e-6 : !nf.row<f32>
  %8 = nf.rms_norm %7 weight %1 eps 1.0e-6 : !nf.row<f32>
  %9 = nf.rms_norm %8 bias %2 eps 1.0e-6 : !nf.row<f32>
  %10 = nf.rms_norm %9 weight %1 bias %2 eps 1.0e-6 : !nf.row<f32>
  %b0 = nf.load %xb [B, S, D] : tensor<?x?x?xbf16>
  %b1 = nf.load %wb [D] : tensor<?xbf16>
  %b2 = nf.layer_norm %b0 weight %b1 eps 1.0e-6 : !nf.row<bf16>
  %h0 = nf.load %xh [B, S, D] : tensor<?x?x?xf16>
  %h1 = nf.rms_norm %h0 eps 1.0e-6 : !nf.row<f16>
  nf.return %10, %b2, %h1 : !nf.row<f32>, !nf.row<bf16>, !nf.row<f16>
}

// CHECK-LABEL: nf.kernel @modulate
// CHECK: %[[N:.*]] = nf.layer_norm
// CHECK-NEXT: nf.modulate %[[N]], %{{.*}}, %{{.*}} : !nf.row<f32>
// CHECK: nf.modulate %{{.*}}, %{{.*}}, %{{.*}} : !nf.row<bf16>
nf.kernel @modulate(%x: tensor<?x?x?xf32>, %scale: tensor<?x1x?xf32>,
                    %shift: tensor<?x1x?xf32>, %xb: tensor<?x?x?xbf16>,
                    %scaleb: tensor<?x?x?xbf16>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xbf16>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %2 = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %3 = nf.layer_norm %0 eps 1.0e-6 : !nf.row<f32>
  %4 = nf.modulate %3, %1, %2 : !nf.row<f32>
  %5 = nf.load %xb [B, S, D] : tensor<?x?x?xbf16>
  %6 = nf.load %scaleb [B, S, D] : tensor<?x?x?xbf16>
  %7 = nf.modulate %5, %6, %6 : !nf.row<bf16>
  nf.return %4, %7 : !nf.row<f32>, !nf.row<bf16>
}

// Rotary embedding: both layouts, full and partial, i32 and i64 positions,
// with and without an offset of either width. One chain may use two caches
// of different sizes (max_pos and rotary_dim belong to the cache).
// CHECK-LABEL: nf.kernel @rope
// CHECK-SAME: %off32: i32, %off64: i64
// CHECK: %[[X:.*]] = nf.load %x [B, S, D] : tensor<?x?x128xf32>
// CHECK-NEXT: %[[R0:.*]] = nf.rope neox %[[X]], %cache[%pos64] rotary 128 : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
// CHECK-NEXT: %[[R1:.*]] = nf.rope interleaved %[[R0]], %cache[%pos64] rotary 128 : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
// CHECK-NEXT: %[[R2:.*]] = nf.rope neox %[[R1]], %cache[%pos64 + %off32] rotary 128 : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>, i32
// CHECK-NEXT: %[[R3:.*]] = nf.rope interleaved %[[R2]], %cache[%pos64 + %off64] rotary 128 : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>, i64
// CHECK-NEXT: %[[R4:.*]] = nf.rope neox %[[R3]], %half[%pos64] rotary 64 : !nf.row<f32>, tensor<4096x64xf32>, tensor<?xi64>
// CHECK-NEXT: nf.rope interleaved %[[R4]], %half[%pos64 + %off32] rotary 64 : !nf.row<f32>, tensor<4096x64xf32>, tensor<?xi64>, i32
// CHECK: nf.rope neox %{{.*}}, %cacheb[%pos32] rotary 2 : !nf.row<bf16>, tensor<?x?xbf16>, tensor<?xi32>
// CHECK-NEXT: nf.rope interleaved %{{.*}}, %cacheb[%pos32 + %off64] rotary 64 : !nf.row<bf16>, tensor<?x?xbf16>, tensor<?xi32>, i64
nf.kernel @rope(%x: tensor<?x?x128xf32>, %cache: tensor<?x128xf32>,
                %half: tensor<4096x64xf32>, %pos64: tensor<?xi64>,
                %xb: tensor<?x?x?xbf16>, %cacheb: tensor<?x?xbf16>,
                %pos32: tensor<?xi32>, %off32: i32, %off64: i64)
    -> (tensor<?x?x128xf32>, tensor<?x?x?xbf16>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x128xf32>
  %1 = nf.rope neox %0, %cache[%pos64] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %2 = nf.rope interleaved %1, %cache[%pos64] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %3 = nf.rope neox %2, %cache[%pos64 + %off32] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>, i32
  %4 = nf.rope interleaved %3, %cache[%pos64 + %off64] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>, i64
  %5 = nf.rope neox %4, %half[%pos64] rotary 64
      : !nf.row<f32>, tensor<4096x64xf32>, tensor<?xi64>
  %6 = nf.rope interleaved %5, %half[%pos64 + %off32] rotary 64
      : !nf.row<f32>, tensor<4096x64xf32>, tensor<?xi64>, i32
  %b0 = nf.load %xb [B, S, D] : tensor<?x?x?xbf16>
  %b1 = nf.rope neox %b0, %cacheb[%pos32] rotary 2
      : !nf.row<bf16>, tensor<?x?xbf16>, tensor<?xi32>
  %b2 = nf.rope interleaved %b1, %cacheb[%pos32 + %off64] rotary 64
      : !nf.row<bf16>, tensor<?x?xbf16>, tensor<?xi32>, i64
  nf.return %6, %b2 : !nf.row<f32>, !nf.row<bf16>
}

// select01: an index of each element type picks one of two operands, under
// several broadcast kinds.
// CHECK-LABEL: nf.kernel @select_load
// CHECK: nf.select_load %idx32, %scale0, %scale1 [B, D] : tensor<?x?xi32>, tensor<?x?xf32>
// CHECK-NEXT: nf.select_load %idx8, %shift0, %shift1 [B, 1, D] : tensor<?x?xi8>, tensor<?x1x?xf32>
// CHECK-NEXT: nf.select_load %idx64, %w0, %w1 [D] : tensor<2x2048xi64>, tensor<3072xf32>
// CHECK-NEXT: nf.select_load %idx32, %t0, %t1 [B, S, D] : tensor<?x?xi32>, tensor<?x?x?xf32>
nf.kernel @select_load(%x: tensor<?x?x?xf32>, %idx32: tensor<?x?xi32>,
                       %idx8: tensor<?x?xi8>, %idx64: tensor<2x2048xi64>,
                       %scale0: tensor<?x?xf32>, %scale1: tensor<?x?xf32>,
                       %shift0: tensor<?x1x?xf32>, %shift1: tensor<?x1x?xf32>,
                       %w0: tensor<3072xf32>, %w1: tensor<3072xf32>,
                       %t0: tensor<?x?x?xf32>, %t1: tensor<?x?x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.select_load %idx32, %scale0, %scale1 [B, D]
      : tensor<?x?xi32>, tensor<?x?xf32>
  %2 = nf.select_load %idx8, %shift0, %shift1 [B, 1, D]
      : tensor<?x?xi8>, tensor<?x1x?xf32>
  %3 = nf.select_load %idx64, %w0, %w1 [D] : tensor<2x2048xi64>, tensor<3072xf32>
  %4 = nf.select_load %idx32, %t0, %t1 [B, S, D]
      : tensor<?x?xi32>, tensor<?x?x?xf32>
  %5 = nf.modulate %0, %1, %2 : !nf.row<f32>
  %6 = nf.mul %5, %3 : !nf.row<f32>
  %7 = nf.add %6, %4 : !nf.row<f32>
  nf.return %7 : !nf.row<f32>
}

// Two chains in one kernel, each written in place into the argument it
// reads; a constant used by both chains does not join them.
// CHECK-LABEL: nf.kernel @in_place
// CHECK-SAME: (%q: tensor<?x?x128xbf16>, %k: tensor<?x?x128xbf16>) -> (tensor<?x?x128xbf16> {nf.in_place = 0 : i64}, tensor<?x?x128xbf16> {nf.in_place = 1 : i64})
// CHECK: nf.load %q [B, S, D]
// CHECK: nf.load %k [B, S, D]
nf.kernel @in_place(%q: tensor<?x?x128xbf16>, %k: tensor<?x?x128xbf16>)
    -> (tensor<?x?x128xbf16> {nf.in_place = 0 : i64},
        tensor<?x?x128xbf16> {nf.in_place = 1 : i64}) {
  %two = nf.constant 2.0 : bf16
  %q0 = nf.load %q [B, S, D] : tensor<?x?x128xbf16>
  %q1 = nf.mul %q0, %two : !nf.row<bf16>, bf16
  %k0 = nf.load %k [B, S, D] : tensor<?x?x128xbf16>
  %k1 = nf.mul %k0, %two : !nf.row<bf16>, bf16
  nf.return %q1, %k1 : !nf.row<bf16>, !nf.row<bf16>
}

// An in-place result into an argument the kernel does not read (an output
// buffer supplied by the caller).
// CHECK-LABEL: nf.kernel @in_place_output_buffer
// CHECK-SAME: -> (tensor<?x?x?xf32> {nf.in_place = 1 : i64})
nf.kernel @in_place_output_buffer(%x: tensor<?x?x?xf32>, %out: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32> {nf.in_place = 1 : i64}) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// Argument names: numbered names become argN, other names are kept, and
// kernel attributes other than the signature's are printed.
// CHECK-LABEL: nf.kernel @argument_names
// CHECK-SAME: (%arg0: tensor<?x?x?xf32>, %hidden_states: tensor<?x?x?xf32>, %arg2: tensor<?xf32>) -> tensor<?x?x?xf32> attributes {nf.note = "kept"}
// CHECK-NEXT: nf.load %arg0 [B, S, D]
// CHECK-NEXT: nf.load %hidden_states [B, S, D]
// CHECK-NEXT: nf.load %arg2 [D]
nf.kernel @argument_names(%0: tensor<?x?x?xf32>, %hidden_states: tensor<?x?x?xf32>,
                          %1: tensor<?xf32>)
    -> tensor<?x?x?xf32> attributes {nf.note = "kept"} {
  %a = nf.load %0 [B, S, D] : tensor<?x?x?xf32>
  %b = nf.load %hidden_states [B, S, D] : tensor<?x?x?xf32>
  %c = nf.load %1 [D] : tensor<?xf32>
  %d = nf.add %a, %b : !nf.row<f32>
  %e = nf.mul %d, %c : !nf.row<f32>
  nf.return %e : !nf.row<f32>
}

// A kernel with no results parses and prints (its chains compute nothing
// observable).
// CHECK-LABEL: nf.kernel @no_results
// CHECK-SAME: (%x: tensor<?x?x?xf32>) {
// CHECK-NEXT: nf.load %x
// CHECK-NEXT: nf.return{{$}}
nf.kernel @no_results(%x: tensor<?x?x?xf32>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return
}

// Chains have their own [B, S]: Q and K may have different head counts
// (S) and a different B, as long as D agrees.
// CHECK-LABEL: nf.kernel @chains_own_b_s
// CHECK-SAME: (%q: tensor<4096x24x128xbf16>, %k: tensor<2048x8x128xbf16>)
nf.kernel @chains_own_b_s(%q: tensor<4096x24x128xbf16>,
                          %k: tensor<2048x8x128xbf16>)
    -> (tensor<4096x24x128xbf16>, tensor<2048x8x128xbf16>) {
  %q0 = nf.load %q [B, S, D] : tensor<4096x24x128xbf16>
  %k0 = nf.load %k [B, S, D] : tensor<2048x8x128xbf16>
  nf.return %q0, %k0 : !nf.row<bf16>, !nf.row<bf16>
}

// Quantized rows: loaded, cast from and to f32, stored; a per-row f32 value
// is returned as a [B, S] result.
// CHECK-LABEL: nf.kernel @quantized
// CHECK-SAME: -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?x?xi8>, tensor<?x?xf32>)
// CHECK: nf.load %q [B, S, D] : tensor<?x?x?xf8E5M2>
// CHECK: nf.cast %{{.*}} : !nf.row<f8E5M2> to !nf.row<f32>
// CHECK: nf.cast %{{.*}} : !nf.row<f32> to !nf.row<f8E4M3FN>
// CHECK: nf.return %{{.*}}, %{{.*}}, %{{.*}} : !nf.row<f8E4M3FN>, !nf.row<i8>, f32
nf.kernel @quantized(%q: tensor<?x?x?xf8E5M2>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?x?xi8>, tensor<?x?xf32>) {
  %0 = nf.load %q [B, S, D] : tensor<?x?x?xf8E5M2>
  %1 = nf.cast %0 : !nf.row<f8E5M2> to !nf.row<f32>
  %2 = nf.reduce max %1 : !nf.row<f32>
  %3 = nf.div %1, %2 : !nf.row<f32>, f32
  %4 = nf.cast %3 : !nf.row<f32> to !nf.row<f8E4M3FN>
  %5 = nf.cast %3 : !nf.row<f32> to !nf.row<i8>
  nf.return %4, %5, %2 : !nf.row<f8E4M3FN>, !nf.row<i8>, f32
}

// Group reductions: one value per group of G elements, combined with
// scalars, with each other and with rows, returned as [B, S, D / G].
// CHECK-LABEL: nf.kernel @group_quant
// CHECK-SAME: -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?x?xf32>)
// CHECK: %[[G:.*]] = nf.reduce max %{{.*}} group 128 : !nf.row<f32>
// CHECK: %[[S:.*]] = nf.div %[[G]], %{{.*}} : !nf.group<f32, 128>, f32
// CHECK: %[[M:.*]] = nf.reduce mean %{{.*}} group 128 : !nf.row<f32>
// CHECK: nf.add %[[S]], %[[M]] : !nf.group<f32, 128>
// CHECK: nf.abs %{{.*}} : !nf.group<f32, 128>
// CHECK: nf.div %{{.*}}, %[[S]] : !nf.row<f32>, !nf.group<f32, 128>
// CHECK: nf.return %{{.*}}, %[[S]] : !nf.row<f8E4M3FN>, !nf.group<f32, 128>
nf.kernel @group_quant(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?x?xf32>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.abs %0 : !nf.row<f32>
  %2 = nf.reduce max %1 group 128 : !nf.row<f32>
  %c = nf.constant 448.0 : f32
  %3 = nf.div %2, %c : !nf.group<f32, 128>, f32
  %4 = nf.reduce mean %0 group 128 : !nf.row<f32>
  %5 = nf.add %3, %4 : !nf.group<f32, 128>
  %6 = nf.abs %5 : !nf.group<f32, 128>
  %7 = nf.div %0, %3 : !nf.row<f32>, !nf.group<f32, 128>
  %8 = nf.cast %7 : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %8, %3 : !nf.row<f8E4M3FN>, !nf.group<f32, 128>
}
