// RUN: nf-compile %s --sm sm_90 --dim D=2048 --emit=rows | FileCheck %s --check-prefix=ROWS
// RUN: nf-compile %s --sm sm_90 --dim D=2048 --emit=ptx | FileCheck %s --check-prefix=SM90
// RUN: nf-compile %s --sm sm_80 --dim D=2048 --emit=rows | FileCheck %s --check-prefix=ROWS80
// RUN: nf-compile %s --sm sm_80 --dim D=2048 --emit=ptx | FileCheck %s --check-prefix=SM80
// RUN: nf-compile %s --cuda-path %cuda_root --sm sm_90 --dim D=2048 --ptxas-info -o /dev/null | FileCheck %s --check-prefix=INFO
// INFO: fagn_v0_{{[a-z_0-9]+}}: vectorized {{.*}} l2_prefetch{{$}}
// INFO-NOT: l2_prefetch
// nf-compile's target reaches -nf-materialize-variants, which gives the
// vectorized variant of seed #2's form (x read by no reduction) the
// l2_prefetch flag on sm_90 and not on sm_80; the lowering turns the flag
// into prefetch.global.L2 of x's chunks before the exchange, and
// --ptxas-info names the flag on the variant's line.
// REQUIRES: ptxas
// ROWS: #nf.variant<name = "v0_{{[a-z_0-9]+}}", vectorized = true, {{[^#]*}}, l2_prefetch = true>
// ROWS80-NOT: l2_prefetch
// SM90: prefetch.global.L2
// SM80-NOT: prefetch
nf.kernel @fagn(%x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
                %gate: tensor<?x1x?xf32>, %weight: tensor<?xf32>)
    -> tensor<?x?x?xbf16> {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %w = nf.load %weight [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %resf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %resf, %k : !nf.row<f32>, f32
  %nw = nf.mul %n, %w : !nf.row<f32>
  %gn = nf.mul %g, %nw : !nf.row<f32>
  %out = nf.add %xf, %gn : !nf.row<f32>
  %outb = nf.cast %out : !nf.row<f32> to !nf.row<bf16>
  nf.return %outb : !nf.row<bf16>
}
