// --print shows every input and result, one line per [b, s] row, with enough
// digits to recover each value exactly in its dtype. Result #0 of @same is
// its input (max(x, x)), so its rows must repeat the captured input rows.
// RUN: nf-interp --print --dims=B=2,S=2,D=3 --offset=3 --dims=P=5 %s \
// RUN:   | FileCheck %s

// CHECK:      @same input %x f16 2x2x3
// CHECK-NEXT:   [0, 0] [[R00:[-0-9.e]+ [-0-9.e]+ [-0-9.e]+]]{{$}}
// CHECK-NEXT:   [0, 1] [[R01:[-0-9.e]+ [-0-9.e]+ [-0-9.e]+]]{{$}}
// CHECK-NEXT:   [1, 0] [[R10:[-0-9.e]+ [-0-9.e]+ [-0-9.e]+]]{{$}}
// CHECK-NEXT:   [1, 1] [[R11:[-0-9.e]+ [-0-9.e]+ [-0-9.e]+]]{{$}}
// CHECK-NEXT: @same result #0 f16 2x2x3
// CHECK-NEXT:   [0, 0] [[R00]]{{$}}
// CHECK-NEXT:   [0, 1] [[R01]]{{$}}
// CHECK-NEXT:   [1, 0] [[R10]]{{$}}
// CHECK-NEXT:   [1, 1] [[R11]]{{$}}
// CHECK-NEXT: @same result #1 f16 2x2x3
// CHECK-NEXT:   [0, 0] 0 0 0{{$}}

// Positions stay in [0, P - offset); the offset argument is --offset.
// CHECK:      @rope input %cache f32 5x2
// CHECK-NEXT:   [0] 1 0{{$}}
// CHECK:      @rope input %pos i32 2
// CHECK-NEXT:   {{^  [01] [01]$}}
// CHECK-NEXT: @rope input %off i64 scalar
// CHECK-NEXT:   {{^  3$}}

nf.kernel @same(%x: tensor<?x?x?xf16>)
    -> (tensor<?x?x?xf16>, tensor<?x?x?xf16>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf16>
  %y = nf.max %xr, %xr : !nf.row<f16>
  %z = nf.sub %xr, %xr : !nf.row<f16>
  nf.return %y, %z : !nf.row<f16>, !nf.row<f16>
}

nf.kernel @rope(%x: tensor<?x?x?xf32>, %cache: tensor<?x2xf32>,
                %pos: tensor<?xi32>, %off: i64) -> tensor<?x?x?xf32> {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %y = nf.rope neox %xr, %cache[%pos + %off] rotary 2
      : !nf.row<f32>, tensor<?x2xf32>, tensor<?xi32>, i64
  nf.return %y : !nf.row<f32>
}
