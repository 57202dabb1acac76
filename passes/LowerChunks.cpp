//===- LowerChunks.cpp - chunks in -nf-lower-to-gpu -----------------------===//
//
// Part of normfuse. The evaluation of the row program on one chunk of a
// row: the chunk's elements, loads, and the arithmetic (conversions,
// elementwise ops, rotary embedding) in f32.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"
#include "passes/QuantizedCasts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::lowering;

//===----------------------------------------------------------------------===//
// Chunks
//===----------------------------------------------------------------------===//

Chunk KernelLowering::makeChunk(Value chunkIndex, Value numChunks) {
  int64_t C = sched.chunk;
  Chunk chunk;
  if (peeled) {
    // Chunk j covers elements [j * C - head, (j + 1) * C - head) of the
    // row, aligned in memory; the row spans ceil((D + head) / C) of them.
    // A chunk past them is read from the row's last one (and masked out),
    // as in the vectorized variant. 64-bit indices: a thread's chunks are
    // then one base plus constants, but for the clamp.
    chunk.first = sub(mul(chunkIndex, i64c(C)), rowHead);
    Value count = div(add(rowLength, add(rowHead, i64c(C - 1))), i64c(C));
    chunk.base =
        sub(mul(minI(chunkIndex, sub(count, i64c(1))), i64c(C)), rowHead);
    // Only whether the chunk is full stays live; which elements of a
    // partial chunk are in the row is computed where it is needed
    // (peeledValid), so that no per-element mask holds registers
    // across the reductions.
    chunk.full =
        andI(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                   chunk.first, i64c(0)),
             arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                   add(chunk.first, i64c(C)), rowLength));
    return chunk;
  }
  if (vectorized && sched.isRegisterResident()) {
    // 32-bit index arithmetic (D is at most the variant's capacity): the
    // chunk offsets stay live until the epilogue's stores, in one register
    // each rather than two.
    Type i32 = b.getI32Type();
    Value index = arith::TruncIOp::create(b, loc, i32, chunkIndex);
    Value count = arith::TruncIOp::create(b, loc, i32, numChunks);
    chunk.valid.push_back(lt(index, count));
    // Clamp so that loads of chunks past the row stay inside it.
    Value last = arith::SubIOp::create(
        b, loc, count, arith::ConstantIntOp::create(b, loc, 1, 32));
    Value base = arith::MulIOp::create(
        b, loc, minI(index, last), arith::ConstantIntOp::create(b, loc, C, 32));
    chunk.base = arith::ExtUIOp::create(b, loc, b.getI64Type(), base);
    return chunk;
  }
  if (vectorized) {
    chunk.valid.push_back(lt(chunkIndex, numChunks));
    // Clamp so that loads of chunks past the row stay inside it.
    Value last = sub(numChunks, i64c(1));
    chunk.base = mul(minI(chunkIndex, last), i64c(C));
    return chunk;
  }
  Value first = mul(chunkIndex, i64c(C));
  if (predicatedElements()) {
    // Unclamped: loadRow predicates each load on `valid`, storeRow each
    // store, and reductions mask the element out.
    chunk.base = first;
    chunk.valid.push_back(lt(first, rowLength));
    chunk.elements.push_back(first);
    return chunk;
  }
  Value lastElement = sub(rowLength, i64c(1));
  chunk.base = first;
  for (int64_t i = 0; i < C; ++i) {
    Value e = add(first, i64c(i));
    chunk.valid.push_back(lt(e, rowLength));
    chunk.elements.push_back(minI(e, lastElement));
  }
  return chunk;
}

Chunk KernelLowering::makeInRowChunk(Value chunkIndex) {
  assert(!vectorized && sched.chunk == 1 && "a general chunk of one element");
  Chunk chunk;
  chunk.base = chunkIndex;
  chunk.elements.push_back(chunkIndex);
  chunk.valid.push_back(trueValue());
  return chunk;
}

Chunk KernelLowering::makeShiftedChunk(Chunk &of,
                                       function_ref<Value(Value)> index) {
  Chunk chunk;
  chunk.valid = of.valid;
  if (vectorized) {
    chunk.base = index(of.base);
    return chunk;
  }
  chunk.base = of.base;
  for (Value e : of.elements)
    chunk.elements.push_back(index(e));
  return chunk;
}

SmallVector<Value> KernelLowering::peeledValid(Chunk &chunk) {
  // Elements lo <= i < hi are in the row, lo = -first and hi = D - first
  // (32-bit: D is at most the variant's capacity): each element's test
  // compares a constant, so no `first + i` is computed here that LLVM
  // would share with (and hoist above the reductions for) the epilogue's
  // element indices, keeping them live across the reductions.
  Type i32 = b.getI32Type();
  Value first = arith::TruncIOp::create(b, loc, i32, chunk.first);
  Value lo = arith::SubIOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, 0, 32), first);
  Value hi = arith::SubIOp::create(
      b, loc, arith::TruncIOp::create(b, loc, i32, rowLength), first);
  SmallVector<Value> valid;
  for (int64_t i = 0; i < sched.chunk; ++i) {
    Value c = arith::ConstantIntOp::create(b, loc, i, 32);
    valid.push_back(
        andI(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, lo, c),
             lt(c, hi)));
  }
  return valid;
}

Value KernelLowering::loadPeeled(Value ptr, Type element, Value rowOff,
                                 Chunk &chunk, bool invariant,
                                 BroadcastKind kind) {
  unsigned bytes = element.getIntOrFloatBitWidth() / 8;
  if (kind == BroadcastKind::BSD) {
    // A row tensor: the runtime checked that it starts at the anchor's
    // offset within a chunk, so every chunk is one aligned access, a row's
    // first and last chunk included: their elements outside the row lie in
    // the same 16 bytes as one inside it (never another page), and are
    // masked out of reductions and stores. No branch around the load, past
    // which ptxas would not move the next chunk's loads (a first build with
    // element-by-element loads in a branch took 2.5 to 3.5 times the
    // registers).
    return LLVM::LoadOp::create(
        b, loc, vecOf(element), gep(ptr, element, add(rowOff, chunk.base)),
        std::min<unsigned>(16, bytes * sched.chunk), false, false, invariant);
  }
  // Broadcast along the rows ([D], [B, 1, D], ...): misaligned with the
  // row. Elements of 4 bytes or more come from the 16-byte granules that
  // hold the chunk's elements, shifted into place (loadShifted); narrower
  // ones element by element (these mostly hit L1), each index clamped into
  // the row. The indices are shared by every such operand.
  if (shiftsBroadcast(bytes))
    return loadShifted(ptr, element, rowOff, chunk, invariant);
  if (chunk.elements.empty()) {
    Value last = sub(rowLength, i64c(1));
    for (int64_t i = 0; i < sched.chunk; ++i)
      chunk.elements.push_back(minI(
          arith::MaxSIOp::create(b, loc, add(chunk.first, i64c(i)), i64c(0)),
          last));
  }
  SmallVector<Value> elements;
  for (Value e : chunk.elements)
    elements.push_back(LLVM::LoadOp::create(b, loc, element,
                                            gep(ptr, element, add(rowOff, e)),
                                            bytes, false, false, invariant));
  return vector::FromElementsOp::create(b, loc, vecOf(element), elements);
}

bool KernelLowering::shiftsBroadcast(unsigned bytes) const {
  return bytes >= 4 && bytes <= 16 && sched.chunk % (16 / bytes) == 0;
}

Value KernelLowering::loadShifted(Value ptr, Type element, Value rowOff,
                                  Chunk &chunk, bool invariant) {
  // The chunk's elements [first, first + C) of an operand broadcast along
  // the rows lie in C / V + 1 of its 16-byte granules of V elements (the
  // runtime checked that the operand and its row offsets are 16-byte
  // aligned): load those, each an aligned access, then shift them by
  // s = first mod V, the same for every chunk of the row (C is a multiple
  // of V), with one select per element and bit of s. Granules are clamped
  // into the row: an element in the row lies in an unclamped one, and one
  // outside it is masked out of reductions and stores. A granule's
  // elements past D lie in the same 16 bytes as one inside it (never
  // another page), as a peeled row's do.
  unsigned bytes = element.getIntOrFloatBitWidth() / 8;
  int64_t C = sched.chunk, V = 16 / bytes;
  Value s = andI(chunk.first, i64c(V - 1));
  Value aligned = sub(chunk.first, s);
  Value lastGranule = andI(sub(rowLength, i64c(1)), i64c(~(V - 1)));
  VectorType granuleType = VectorType::get({V}, element);
  SmallVector<Value> granules;
  for (int64_t g = 0; g <= C / V; ++g) {
    Value index =
        minI(arith::MaxSIOp::create(b, loc, add(aligned, i64c(g * V)), i64c(0)),
             lastGranule);
    granules.push_back(LLVM::LoadOp::create(
        b, loc, granuleType, gep(ptr, element, add(rowOff, index)), 16, false,
        false, invariant));
  }
  // Concatenate the granules, then drop the first s elements.
  auto slice = [&](Value v, int64_t from, int64_t count) {
    SmallVector<int64_t> mask;
    for (int64_t i = 0; i < count; ++i)
      mask.push_back(from + i);
    return vector::ShuffleOp::create(b, loc, v, v, mask).getResult();
  };
  Value all = granules.front();
  for (Value granule : ArrayRef<Value>(granules).drop_front()) {
    int64_t n = cast<VectorType>(all.getType()).getNumElements();
    SmallVector<int64_t> mask;
    for (int64_t i = 0; i < n + V; ++i)
      mask.push_back(i);
    all = vector::ShuffleOp::create(b, loc, all, granule, mask);
  }
  int64_t length = C + V;
  for (int64_t bit = V / 2; bit >= 1; bit /= 2) {
    Value taken = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        andI(s, i64c(bit)), i64c(0));
    length -= bit;
    all = select(taken, slice(all, bit, length), slice(all, 0, length));
  }
  return slice(all, 0, C);
}

Value KernelLowering::loadRow(Value ptr, Type element, Value rowOff,
                              Chunk &chunk, bool invariant,
                              BroadcastKind kind) {
  if (peeled)
    return loadPeeled(ptr, element, rowOff, chunk, invariant, kind);
  unsigned bytes = element.getIntOrFloatBitWidth() / 8;
  if (vectorized) {
    Value address = gep(ptr, element, add(rowOff, chunk.base));
    unsigned align = std::min<unsigned>(16, bytes * sched.chunk);
    return LLVM::LoadOp::create(b, loc, vecOf(element), address, align, false,
                                false, invariant);
  }
  SmallVector<Value> elements;
  if (predicatedElements()) {
    for (auto [i, e] : llvm::enumerate(chunk.elements)) {
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{element}, chunk.valid[i],
                                    /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value loaded = LLVM::LoadOp::create(b, loc, element,
                                          gep(ptr, element, add(rowOff, e)),
                                          bytes, false, false, invariant);
      scf::YieldOp::create(b, loc, loaded);
      b.setInsertionPointToStart(ifOp.elseBlock());
      Value zero = arith::ConstantOp::create(
          b, loc, element, cast<TypedAttr>(b.getZeroAttr(element)));
      scf::YieldOp::create(b, loc, zero);
      elements.push_back(ifOp.getResult(0));
    }
    return vector::FromElementsOp::create(b, loc, vecOf(element), elements);
  }
  for (Value e : chunk.elements)
    elements.push_back(LLVM::LoadOp::create(b, loc, element,
                                            gep(ptr, element, add(rowOff, e)),
                                            bytes, false, false, invariant));
  return vector::FromElementsOp::create(b, loc, vecOf(element), elements);
}

Value KernelLowering::evaluate(Value v, Chunk &chunk) {
  if (auto group = dyn_cast<GroupType>(v.getType()))
    return expandGroup(evaluateGroup(v, chunk), group.getSize());
  if (!isa<RowType>(v.getType()))
    return splat(scalarOf(v));
  auto cached = chunk.cache.find(v);
  if (cached != chunk.cache.end())
    return cached->second;

  Operation *op = v.getDefiningOp();
  auto isWritten = [&](Value tensor) {
    unsigned arg = cast<BlockArgument>(tensor).getArgNumber();
    for (unsigned r = 0; r < kernel.getResultTypes().size(); ++r)
      if (kernel.getInPlaceArgument(r) == arg)
        return true;
    return false;
  };
  Value result =
      llvm::TypeSwitch<Operation *, Value>(op)
          .Case([&](LoadOp load) -> Value {
            auto type = cast<RankedTensorType>(load.getSource().getType());
            Type element = getStorageType(type.getElementType());
            Value ptr =
                argValue[cast<BlockArgument>(load.getSource()).getArgNumber()];
            auto staged = chunk.staged.find(v);
            if (staged != chunk.staged.end())
              return LLVM::LoadOp::create(b, loc, vecOf(element),
                                          staged->second, 16);
            if (load.getKind() == BroadcastKind::One) {
              Value scalar = LLVM::LoadOp::create(
                  b, loc, element, ptr, element.getIntOrFloatBitWidth() / 8,
                  false, false, true);
              return splat(scalar);
            }
            return loadRow(ptr, element,
                           rowOffset(load.getSource(), load.getKind()), chunk,
                           !isWritten(load.getSource()), load.getKind());
          })
          .Case([&](SelectLoadOp selectOp) -> Value {
            auto type = cast<RankedTensorType>(selectOp.getFirst().getType());
            Type element = getStorageType(type.getElementType());
            Value taken = selectTaken[selectOp];
            auto argOf = [&](Value t) {
              return cast<BlockArgument>(t).getArgNumber();
            };
            // Pick the pointer, not the data: only the chosen set is read.
            Value ptr = select(taken, argValue[argOf(selectOp.getSecond())],
                               argValue[argOf(selectOp.getFirst())]);
            Value off = select(
                taken, rowOffset(selectOp.getSecond(), selectOp.getKind()),
                rowOffset(selectOp.getFirst(), selectOp.getKind()));
            if (selectOp.getKind() == BroadcastKind::One)
              return splat(LLVM::LoadOp::create(
                  b, loc, element, ptr, element.getIntOrFloatBitWidth() / 8,
                  false, false, true));
            return loadRow(ptr, element, off, chunk, true, selectOp.getKind());
          })
          .Case([&](RopeOp rope) -> Value { return evaluateRope(rope, chunk); })
          .Default([&](Operation *op) -> Value {
            auto div = dyn_cast<DivOp>(op);
            if (div && isa<GroupType>(div.getRhs().getType()))
              return divideByGroup(div, chunk);
            auto reciprocal = reciprocals.find(op);
            if (reciprocal != reciprocals.end()) {
              auto [k, r] = reciprocal->second;
              Value x = toF32(evaluate(op->getOperand(0), chunk));
              Value scaled = k ? arith::MulFOp::create(b, loc, x, splat(k)) : x;
              Value q = arith::MulFOp::create(b, loc, scaled, splat(r));
              return fromF32(q, getRowElementType(v.getType()));
            }
            SmallVector<Value> operands;
            for (Value operand : op->getOperands())
              operands.push_back(evaluate(operand, chunk));
            return emitElementwise(op, operands);
          });
  chunk.cache[v] = result;
  return result;
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

Value KernelLowering::toF32(Value v) {
  Type element = getElementTypeOrSelf(v.getType());
  if (element.isF32())
    return v;
  Type f32 = b.getF32Type();
  Type type = isa<VectorType>(v.getType()) ? Type(vecOf(f32)) : f32;
  return arith::ExtFOp::create(b, loc, type, v);
}

Value KernelLowering::fromF32(Value v, Type element) {
  if (element.isF32())
    return v;
  Type type = isa<VectorType>(v.getType()) ? Type(vecOf(element)) : element;
  return arith::TruncFOp::create(b, loc, type, v);
}

/// Applies a scalar function to every element: libdevice calls take scalars.
Value KernelLowering::mapScalars(Value v, function_ref<Value(Value)> fn) {
  auto type = dyn_cast<VectorType>(v.getType());
  if (!type)
    return fn(v);
  SmallVector<Value> elements;
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    elements.push_back(fn(vector::ExtractOp::create(b, loc, v, i)));
  return vector::FromElementsOp::create(b, loc, type, elements);
}

/// The correctly rounded sqrt.rn.f32. math.sqrt becomes libdevice's
/// __nv_sqrtf, which is sqrt.approx unless precise sqrt is reflected in, and
/// convert-gpu-to-nvvm rejects llvm.intr.sqrt.
Value KernelLowering::sqrtRn(Value x) {
  return mapScalars(x, [&](Value e) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                         b.getStringAttr("llvm.nvvm.sqrt.rn.f"),
                                         ValueRange{e})
        .getResult(0);
  });
}

Value KernelLowering::callF32(StringRef intrinsic, Value e) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(), b.getStringAttr(intrinsic), ValueRange{e})
      .getResult(0);
}

/// rsqrt.approx.f32 refined by one Newton step (relative error ~1e-7).
/// 1 / sqrt.rn(x) would be exact, but ptxas implements the IEEE division
/// with a called subroutine whose register saves show up as spills.
/// The step is r * (1.5 - 0.5 * ((x * r) * r)): x * r is about sqrt(x), so
/// no intermediate overflows or underflows for any positive finite x (r * r
/// does past x < 2^-128, a subnormal). Where x is 0 or +inf the step is
/// 0 * inf = NaN and the approximation's exact inf or 0 is kept; a negative
/// or NaN x has a NaN approximation already. One NaN test rather than a
/// range test of x (three comparisons and selects per row in SASS).
Value KernelLowering::rsqrtRefined(Value x) {
  return mapScalars(x, [&](Value e) -> Value {
    Value r = callF32("llvm.nvvm.rsqrt.approx.f", e);
    Value t =
        arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, e, r), r);
    Value refined = arith::MulFOp::create(
        b, loc, r,
        arith::SubFOp::create(b, loc, f32c(1.5),
                              arith::MulFOp::create(b, loc, f32c(0.5), t)));
    Value undefined = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                            refined, refined);
    return select(undefined, r, refined);
  });
}

Value KernelLowering::emitElementwise(Operation *op, ArrayRef<Value> operands) {
  Type resultElement = getRowElementType(op->getResult(0).getType());
  if (auto cast = dyn_cast<CastOp>(op)) {
    Value v = operands[0];
    Type inputElement = getRowElementType(cast.getInput().getType());
    if (inputElement == resultElement)
      return v;
    // Quantized rows cast only from and to f32 (the verifier's rule).
    if (isNfQuantized(inputElement))
      return emitDequantize(b, loc, v, inputElement);
    if (isNfQuantized(resultElement))
      return emitQuantize(b, loc, v, resultElement, hardwareFp8);
    return fromF32(toF32(v), resultElement);
  }
  // Row-scalar mixes: the scalar was splatted by evaluate(); a scalar op
  // only sees scalars.
  SmallVector<Value> f32Operands;
  for (Value v : operands)
    f32Operands.push_back(toF32(v));
  Value x = f32Operands[0];
  Value y = f32Operands.size() > 1 ? f32Operands[1] : Value();
  Type type = x.getType();
  auto one = [&]() -> Value {
    Value c = f32c(1.0);
    return isa<VectorType>(type) ? splat(c) : c;
  };
  Value result =
      llvm::TypeSwitch<Operation *, Value>(op)
          .Case([&](AddOp) { return arith::AddFOp::create(b, loc, x, y); })
          .Case([&](SubOp) { return arith::SubFOp::create(b, loc, x, y); })
          .Case([&](MulOp) { return arith::MulFOp::create(b, loc, x, y); })
          .Case([&](DivOp) { return arith::DivFOp::create(b, loc, x, y); })
          .Case([&](MaxOp) { return arith::MaximumFOp::create(b, loc, x, y); })
          .Case([&](MinOp) { return arith::MinimumFOp::create(b, loc, x, y); })
          .Case([&](NegOp) { return arith::NegFOp::create(b, loc, x); })
          .Case([&](AbsOp) { return math::AbsFOp::create(b, loc, x); })
          .Case([&](ExpOp) { return exp2Approx(x); })
          .Case([&](TanhOp) {
            return mapScalars(x, [&](Value e) -> Value {
              return math::TanhOp::create(b, loc, e);
            });
          })
          .Case([&](SigmoidOp) {
            Value e = exp2Approx(arith::NegFOp::create(b, loc, x));
            // rcp.rn is 1 / x correctly rounded: the division's result.
            return mapScalars(arith::AddFOp::create(b, loc, one(), e),
                              [&](Value d) -> Value {
                                return callF32("llvm.nvvm.rcp.rn.f", d);
                              });
          })
          .Case([&](SqrtOp) { return sqrtRn(x); })
          .Case([&](RsqrtOp) { return rsqrtRefined(x); })
          .Default([&](Operation *) -> Value { return {}; });
  assert(result && "unhandled elementwise op");
  return fromF32(result, resultElement);
}

bool KernelLowering::ropePartnerInRegisters(RopeOp rope) {
  if (!vectorized)
    return false;
  if (rope.getLayout() != RopeLayout::Neox)
    return true;
  // Chunk c pairs with chunk c ^ m (m = half / chunk). When m is a power of
  // two below the row's lanes in a warp, the partner chunk is in lane
  // `lane ^ m` at the same unrolled slot.
  int64_t m = rope.getRotaryDim() / 2 / sched.chunk;
  return sched.isRegisterResident() && llvm::isPowerOf2_64(m) &&
         m < std::min<int64_t>(sched.threadsPerRow, 32);
}

Value KernelLowering::evaluateRope(RopeOp rope, Chunk &chunk) {
  Value x = toF32(evaluate(rope.getInput(), chunk));
  Type element = getRowElementType(rope.getType());
  int64_t rotary = rope.getRotaryDim();
  int64_t half = rotary / 2;
  int64_t C = sched.chunk;
  auto [pos, posValid] = ropePosition[rope];
  Value cachePtr =
      argValue[cast<BlockArgument>(rope.getCache()).getArgNumber()];
  Value cacheRow = mul(pos, stridesOf(rope.getCache())[0]);
  bool neox = rope.getLayout() == RopeLayout::Neox;
  Value rotaryC = i64c(rotary), halfC = i64c(half);

  // Per element (general) or per chunk (vectorized: the chunk lies in one
  // half, checked when the vectorized variant is chosen): the partner index,
  // the cos/sin column, and whether the element rotates.
  auto partnerOf = [&](Value e) -> Value {
    Value inRot = lt(e, rotaryC);
    Value partner;
    if (neox) {
      partner = select(lt(e, halfC), add(e, halfC), sub(e, halfC));
    } else {
      // e ^ 1: the other element of the pair.
      partner = arith::XOrIOp::create(b, loc, e, i64c(1));
    }
    return select(inRot, partner, e);
  };

  Value cos, sin, sign, inRotation;
  Value xp;
  if (vectorized) {
    Value e0 = chunk.base;
    inRotation = splat(lt(e0, rotaryC));
    Type f32 = b.getF32Type();
    if (neox) {
      Value first = lt(e0, halfC);
      // The partner chunk in lane `lane ^ m` (ropePartnerInRegisters):
      // exchange it with shuffles instead of recomputing it from memory.
      if (ropePartnerInRegisters(rope)) {
        Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
        Value offset = arith::ConstantIntOp::create(b, loc, half / C, 32);
        xp = mapScalars(x, [&](Value e) -> Value {
          return gpu::ShuffleOp::create(b, loc, e, offset, width,
                                        gpu::ShuffleMode::XOR)
              .getShuffleResult();
        });
      } else {
        Chunk partner = makeShiftedChunk(chunk, partnerOf);
        xp = toF32(evaluate(rope.getInput(), partner));
      }
      Value col =
          select(lt(e0, rotaryC), select(first, e0, sub(e0, halfC)), i64c(0));
      unsigned align = std::min<int64_t>(16, 4 * C);
      cos = LLVM::LoadOp::create(b, loc, vecOf(f32),
                                 gep(cachePtr, f32, add(cacheRow, col)), align,
                                 false, false, true);
      sin = LLVM::LoadOp::create(
          b, loc, vecOf(f32),
          gep(cachePtr, f32, add(cacheRow, add(col, halfC))), align, false,
          false, true);
      sign = select(splat(first), splat(f32c(-1.0)), splat(f32c(1.0)));
    } else {
      // Pairs are adjacent inside the chunk: swap them in registers.
      SmallVector<int64_t> swap, twice;
      SmallVector<float> signs;
      for (int64_t i = 0; i < C; ++i) {
        swap.push_back(i ^ 1);
        twice.push_back(i / 2);
        signs.push_back(i % 2 ? 1.0f : -1.0f);
      }
      xp = vector::ShuffleOp::create(b, loc, x, x, swap);
      Value col = select(lt(e0, rotaryC), div(e0, i64c(2)), i64c(0));
      auto halfType = VectorType::get({C / 2}, f32);
      unsigned align = std::min<int64_t>(16, 2 * C);
      Value c2 = LLVM::LoadOp::create(b, loc, halfType,
                                      gep(cachePtr, f32, add(cacheRow, col)),
                                      align, false, false, true);
      Value s2 = LLVM::LoadOp::create(
          b, loc, halfType, gep(cachePtr, f32, add(cacheRow, add(col, halfC))),
          align, false, false, true);
      cos = vector::ShuffleOp::create(b, loc, c2, c2, twice);
      sin = vector::ShuffleOp::create(b, loc, s2, s2, twice);
      sign = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vecOf(f32), ArrayRef<float>(signs)));
    }
  } else {
    Chunk partner = makeShiftedChunk(chunk, partnerOf);
    xp = toF32(evaluate(rope.getInput(), partner));
    SmallVector<Value> cosElems, sinElems, signElems, rotElems;
    Type f32 = b.getF32Type();
    for (Value e : chunk.elements) {
      Value inRot = lt(e, rotaryC);
      Value col;
      Value firstOfPair;
      if (neox) {
        firstOfPair = lt(e, halfC);
        col = select(firstOfPair, e, sub(e, halfC));
      } else {
        firstOfPair = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::AndIOp::create(b, loc, e, i64c(1)), i64c(0));
        col = div(e, i64c(2));
      }
      col = select(inRot, col, i64c(0));
      cosElems.push_back(LLVM::LoadOp::create(
          b, loc, f32, gep(cachePtr, f32, add(cacheRow, col)), 4, false, false,
          true));
      sinElems.push_back(LLVM::LoadOp::create(
          b, loc, f32, gep(cachePtr, f32, add(cacheRow, add(col, halfC))), 4,
          false, false, true));
      signElems.push_back(select(firstOfPair, f32c(-1.0), f32c(1.0)));
      rotElems.push_back(inRot);
    }
    auto f32Vec = vecOf(f32);
    cos = vector::FromElementsOp::create(b, loc, f32Vec, cosElems);
    sin = vector::FromElementsOp::create(b, loc, f32Vec, sinElems);
    sign = vector::FromElementsOp::create(b, loc, f32Vec, signElems);
    inRotation = vector::FromElementsOp::create(
        b, loc, VectorType::get({C}, b.getI1Type()), rotElems);
  }
  // A position outside the cache makes the rotated elements NaN rather
  // than silently reading another row of the cache.
  Value nan = splat(f32c(std::numeric_limits<double>::quiet_NaN()));
  cos = select(splat(posValid), cos, nan);
  Value rotated = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, x, cos),
      arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, sign, xp),
                            sin));
  return fromF32(select(inRotation, rotated, x), element);
}
