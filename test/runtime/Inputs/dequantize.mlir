// Every quantized element type loaded and cast to f32 (the dequantizing
// nf.cast, exact): tools/gpu-quant-check.sh launches it over all 256 byte
// values of each type (python/tests/gpu_quant.py) and compares with torch's
// conversions bit for bit.
nf.kernel @dequantize(%a: tensor<?x?x?xf8E4M3FN>, %b: tensor<?x?x?xf8E5M2>,
                      %c: tensor<?x?x?xi8>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %a8 = nf.load %a [B, S, D] : tensor<?x?x?xf8E4M3FN>
  %b8 = nf.load %b [B, S, D] : tensor<?x?x?xf8E5M2>
  %c8 = nf.load %c [B, S, D] : tensor<?x?x?xi8>
  %af = nf.cast %a8 : !nf.row<f8E4M3FN> to !nf.row<f32>
  %bf = nf.cast %b8 : !nf.row<f8E5M2> to !nf.row<f32>
  %cf = nf.cast %c8 : !nf.row<i8> to !nf.row<f32>
  nf.return %af, %bf, %cf : !nf.row<f32>, !nf.row<f32>, !nf.row<f32>
}
