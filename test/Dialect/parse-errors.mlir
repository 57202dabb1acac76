// RUN: nf-opt %s -split-input-file -verify-diagnostics

// Syntax errors: the parser reports them with a location, like any verifier
// error (invalid.mlir holds the verifier's rules).

nf.kernel @unknown_op(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{custom op 'nf.softmax' is unknown}}
  %1 = nf.softmax %0 : !nf.row<f32>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @missing_type(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error@+1 {{expected ':'}}
  %0 = nf.load %x [B, S, D]
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @missing_binary_type(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{expected ':'}}
  %1 = nf.add %0, %0
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @missing_eps(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{expected 'eps'}}
  %1 = nf.rms_norm %0 : !nf.row<f32>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @missing_kind(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error@+1 {{expected '['}}
  %0 = nf.load %x : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @lowercase_kind(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error@+1 {{unknown broadcast kind}}
  %0 = nf.load %x [b, s, d] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @unknown_reduce(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, mean, mean_sq]}}
  %1 = nf.reduce prod %0 : !nf.row<f32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @unknown_layout(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                          %pos: tensor<?xi64>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{expected string or keyword containing one of the following enum values for attribute 'layout' [neox, interleaved]}}
  %1 = nf.rope gptj %0, %cs[%pos] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @rope_missing_offset_type(%q: tensor<?x?x128xf32>,
                                    %cs: tensor<?x128xf32>,
                                    %pos: tensor<?xi64>, %off: i64)
    -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{number of operands and types do not match: got 1 operands and 0 types}}
  %1 = nf.rope neox %0, %cs[%pos + %off] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @undefined_value(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error@+1 {{use of undeclared SSA value name}}
  %0 = nf.load %y [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// expected-error@+1 {{expected valid '@'-identifier for symbol name}}
nf.kernel kernel_without_at(%x: tensor<?x?x?xf32>) {
  nf.return
}

// -----

nf.kernel @bad_row_type(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{expected '<'}}
  nf.return %0 : !nf.row
}

// -----

// expected-error@+1 {{custom op 'this' is unknown}}
this is not IR at all
