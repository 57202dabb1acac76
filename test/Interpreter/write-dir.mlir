// --write-dir writes every input and result as raw little-endian binary in
// its dtype, and a manifest line for each.
// RUN: rm -rf %t && nf-interp --write-dir=%t --dims=B=2,S=3,D=5 --offset=1 %s
// RUN: FileCheck %s < %t/manifest.txt
// RUN: wc -c < %t/k.in.x.bin | FileCheck %s --check-prefix=X
// RUN: wc -c < %t/k.in.idx.bin | FileCheck %s --check-prefix=IDX
// RUN: wc -c < %t/k.in.pos.bin | FileCheck %s --check-prefix=POS
// RUN: wc -c < %t/k.in.off.bin | FileCheck %s --check-prefix=OFF
// RUN: wc -c < %t/k.out.0.bin | FileCheck %s --check-prefix=OUT0
// RUN: wc -c < %t/k.out.1.bin | FileCheck %s --check-prefix=OUT1

// CHECK:      # kernel input|output name dtype shape file [key=value]
// CHECK-NEXT: k input x bf16 2x3x5 k.in.x.bin role=data
// CHECK-NEXT: k input idx i8 2x3 k.in.idx.bin role=index
// CHECK-NEXT: k input a f16 2x5 k.in.a.bin role=data
// CHECK-NEXT: k input b f16 2x5 k.in.b.bin role=data
// CHECK-NEXT: k input cache f32 32x4 k.in.cache.bin role=cache
// CHECK-NEXT: k input pos i64 2 k.in.pos.bin role=positions
// CHECK-NEXT: k input off i32 scalar k.in.off.bin role=offset
// CHECK-NEXT: k output 0 bf16 2x3x5 k.out.0.bin in_place=x{{$}}
// CHECK-NEXT: k output 1 f32 2x3x5 k.out.1.bin{{$}}
// X: {{^}}60{{$}}
// IDX: {{^}}6{{$}}
// POS: {{^}}16{{$}}
// OFF: {{^}}4{{$}}
// OUT0: {{^}}60{{$}}
// OUT1: {{^}}120{{$}}

nf.kernel @k(%x: tensor<?x?x?xbf16>, %idx: tensor<?x?xi8>,
             %a: tensor<?x?xf16>, %b: tensor<?x?xf16>,
             %cache: tensor<?x4xf32>, %pos: tensor<?xi64>, %off: i32)
    -> (tensor<?x?x?xbf16> {nf.in_place = 0 : i64}, tensor<?x?x?xf32>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %m = nf.select_load %idx, %a, %b [B, D] : tensor<?x?xi8>, tensor<?x?xf16>
  %xf = nf.cast %xr : !nf.row<bf16> to !nf.row<f32>
  %mf = nf.cast %m : !nf.row<f16> to !nf.row<f32>
  %s = nf.add %xf, %mf : !nf.row<f32>
  %y = nf.rope interleaved %s, %cache[%pos + %off] rotary 4
      : !nf.row<f32>, tensor<?x4xf32>, tensor<?xi64>, i32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %s : !nf.row<bf16>, !nf.row<f32>
}
