// A hand-written prototype, not generated code: does a CTA that walks many
// rows and copies the next row into shared memory (cp.async) while it
// computes the current one bring layernorm_modulate_quant_fp8 near the copy
// floor? docs/benchmarks.md ("Where layernorm_modulate_quant_fp8's time
// goes") found every phase of the row's chain adding time while no single
// resource is saturated; this measures the schedule before the compiler
// learns it.
//
// Semantics: examples/layernorm_modulate_quant_fp8.mlir (x bf16 [rows, D];
// scale, shift f32 [D] per batch entry, B = 1 here; q fp8 e4m3 [rows, D],
// s f32 [rows]). Variants (MODE):
//   0  one row per CTA, the row in registers, operands read from global
//      after the statistics (what normfuse emits today);
//   1  persistent CTAs, next row staged in shared memory by cp.async while
//      the current one is computed; operands read from global per row;
//   2  as 1, operands held in registers across rows (reloaded when the
//      batch entry changes);
//   3  as 1, operands staged once per CTA in shared memory;
//   4  persistent CTAs, the row loaded straight into registers (no
//      staging), operands held in registers as in 2.
// MODE 0 is also run with zero operands read from nowhere ("no operands"),
// the same arithmetic without the operands' loads.
// Each variant's outputs are compared byte for byte with MODE 0's, and
// MODE 0's scales with a host reference. Speed: % of an SM copy kernel
// moving the same bytes, in the same process.
//
// Build and run: nvcc -O3 -arch=sm_90 -std=c++17 staged_rows.cu -o sr && ./sr

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "error: %s: %s (line %d)\n", #x,                    \
                   cudaGetErrorString(e), __LINE__);                           \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

constexpr float kEps = 1e-6f;
constexpr float kSMin = 4.35965e-06f;

// The CTA's total of `v` under `op` (sum or max), through shared `buf`.
template <int T, class Op>
__device__ float blockReduce(float v, float *buf, Op op) {
  for (int o = 16; o; o >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0)
    buf[threadIdx.x >> 5] = v;
  __syncthreads();
  float s = buf[0];
#pragma unroll
  for (int w = 1; w < T / 32; ++w)
    s = op(s, buf[w]);
  return s;
}
struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__device__ __forceinline__ void cpAsync16(void *smem, const void *gmem) {
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s),
               "l"(gmem));
}
__device__ __forceinline__ void cpCommit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void cpWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Widens 8 bf16 (one 16-byte chunk) into f32.
__device__ __forceinline__ void widen(uint4 c, float *v) {
  const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&c);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    float2 f = __bfloat1622float2(h[k]);
    v[2 * k] = f.x;
    v[2 * k + 1] = f.y;
  }
}

// Everything after the row is in registers: statistics, modulation, row
// maximum, quantization, stores. `sc`/`sh` give the operands of element k
// of chunk j (the caller decides where they come from).
template <int D, int T, class Op>
__device__ __forceinline__ void computeRow(float (&v)[D / T], int row,
                                           float *red, Op operand, uint2 *q,
                                           float *s) {
  constexpr int C = D / T / 8;
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < D / T; ++i)
    sum += v[i];
  float mean = blockReduce<T>(sum, red, Add()) * (1.f / D);
  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < D / T; ++i) {
    v[i] -= mean;
    sq += v[i] * v[i];
  }
  float rstd = rsqrtf(blockReduce<T>(sq, red + 32, Add()) * (1.f / D) + kEps);
  float am = 0.f;
#pragma unroll
  for (int j = 0; j < C; ++j) {
    float sc[8], sh[8];
    operand(j, sc, sh);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      float &y = v[j * 8 + k];
      y = y * rstd * (1.f + sc[k]) + sh[k];
      am = fmaxf(am, fabsf(y));
    }
  }
  float amax = blockReduce<T>(am, red + 64, Max());
  float sr = fmaxf(amax / 448.f, kSMin);
  float inv = 1.f / sr;
#pragma unroll
  for (int j = 0; j < C; ++j) {
    unsigned short p[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      p[k] = __nv_cvt_float2_to_fp8x2(
          make_float2(v[j * 8 + 2 * k] * inv, v[j * 8 + 2 * k + 1] * inv),
          __NV_SATFINITE, __NV_E4M3);
    uint2 o;
    o.x = p[0] | (unsigned(p[1]) << 16);
    o.y = p[2] | (unsigned(p[3]) << 16);
    q[(size_t)row * (D / 8) + j * T + threadIdx.x] = o;
  }
  if (threadIdx.x == 0)
    s[row] = sr;
}

template <int D, int T, bool NOOP>
__global__ void __launch_bounds__(T)
    rowPerCta(const uint4 *x, const float *scale, const float *shift, uint2 *q,
              float *s, int rows, float zero) {
  constexpr int C = D / T / 8;
  __shared__ float red[96];
  int row = blockIdx.x;
  float v[D / T];
#pragma unroll
  for (int j = 0; j < C; ++j)
    widen(x[(size_t)row * (D / 8) + j * T + threadIdx.x], &v[j * 8]);
  auto op = [&](int j, float *sc, float *sh) {
    if (NOOP) {
      for (int k = 0; k < 8; ++k)
        sc[k] = sh[k] = zero * k;
      return;
    }
    const float4 *a =
        reinterpret_cast<const float4 *>(scale) + (j * T + threadIdx.x) * 2;
    const float4 *b =
        reinterpret_cast<const float4 *>(shift) + (j * T + threadIdx.x) * 2;
    *reinterpret_cast<float4 *>(sc) = a[0];
    *reinterpret_cast<float4 *>(sc + 4) = a[1];
    *reinterpret_cast<float4 *>(sh) = b[0];
    *reinterpret_cast<float4 *>(sh + 4) = b[1];
  };
  computeRow<D, T>(v, row, red, op, q, s);
}

// MODE 1-3. Dynamic shared memory: STAGES row slots (D * 2 bytes each),
// then for MODE 3 the two operands (D * 4 bytes each, permuted so that a
// warp's 16-byte reads are consecutive).
template <int D, int T, int STAGES, int MODE>
__global__ void __launch_bounds__(T)
    persistent(const uint4 *x, const float *scale, const float *shift, uint2 *q,
               float *s, int rows, int rowsPerBatch) {
  constexpr int C = D / T / 8;
  __shared__ float red[96];
  extern __shared__ uint4 dyn[];
  uint4 *slots = dyn;
  float4 *opsm = reinterpret_cast<float4 *>(dyn + STAGES * (D / 8));
  const int G = gridDim.x;
  auto issue = [&](int row, int slot) {
    if (row < rows) {
#pragma unroll
      for (int j = 0; j < C; ++j)
        cpAsync16(&slots[slot * (D / 8) + j * T + threadIdx.x],
                  &x[(size_t)row * (D / 8) + j * T + threadIdx.x]);
    }
    cpCommit();
  };
  int r = blockIdx.x;
  if (MODE != 4) {
#pragma unroll
    for (int k = 0; k < STAGES - 1; ++k)
      issue(r + k * G, k);
  }
  float osc[MODE == 2 || MODE == 4 ? D / T : 1],
      osh[MODE == 2 || MODE == 4 ? D / T : 1];
  int cb = -1;
  for (int i = 0; r < rows; r += G, ++i) {
    float v[D / T];
    if (MODE == 4) {
#pragma unroll
      for (int j = 0; j < C; ++j)
        widen(x[(size_t)r * (D / 8) + j * T + threadIdx.x], &v[j * 8]);
    } else {
      issue(r + (STAGES - 1) * G, (i + STAGES - 1) % STAGES);
      cpWait<STAGES - 1>();
      int slot = i % STAGES;
#pragma unroll
      for (int j = 0; j < C; ++j)
        widen(slots[slot * (D / 8) + j * T + threadIdx.x], &v[j * 8]);
    }
    int b = r / rowsPerBatch;
    const float *sca = scale + (size_t)b * D, *shb = shift + (size_t)b * D;
    if ((MODE == 2 || MODE == 4) && b != cb) {
#pragma unroll
      for (int j = 0; j < C; ++j) {
        const float4 *a =
            reinterpret_cast<const float4 *>(sca) + (j * T + threadIdx.x) * 2;
        const float4 *c =
            reinterpret_cast<const float4 *>(shb) + (j * T + threadIdx.x) * 2;
        *reinterpret_cast<float4 *>(&osc[j * 8]) = a[0];
        *reinterpret_cast<float4 *>(&osc[j * 8 + 4]) = a[1];
        *reinterpret_cast<float4 *>(&osh[j * 8]) = c[0];
        *reinterpret_cast<float4 *>(&osh[j * 8 + 4]) = c[1];
      }
      cb = b;
    }
    if (MODE == 3 && b != cb) {
      __syncthreads();
      // opsm[(j * 2 + h) * T + t] holds elements (j*T + t)*8 + 4h .. +4.
      for (int e = threadIdx.x; e < D / 4; e += T) {
        int t = (e / 2) % T, j = (e / 2) / T, h = e % 2;
        opsm[(j * 2 + h) * T + t] = reinterpret_cast<const float4 *>(sca)[e];
        opsm[(D / 4) + (j * 2 + h) * T + t] =
            reinterpret_cast<const float4 *>(shb)[e];
      }
      __syncthreads();
      cb = b;
    }
    auto op = [&](int j, float *sc, float *sh) {
      if (MODE == 1) {
        const float4 *a =
            reinterpret_cast<const float4 *>(sca) + (j * T + threadIdx.x) * 2;
        const float4 *c =
            reinterpret_cast<const float4 *>(shb) + (j * T + threadIdx.x) * 2;
        *reinterpret_cast<float4 *>(sc) = a[0];
        *reinterpret_cast<float4 *>(sc + 4) = a[1];
        *reinterpret_cast<float4 *>(sh) = c[0];
        *reinterpret_cast<float4 *>(sh + 4) = c[1];
      } else if (MODE == 2 || MODE == 4) {
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          sc[k] = osc[j * 8 + k];
          sh[k] = osh[j * 8 + k];
        }
      } else {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          *reinterpret_cast<float4 *>(sc + 4 * h) =
              opsm[(j * 2 + h) * T + threadIdx.x];
          *reinterpret_cast<float4 *>(sh + 4 * h) =
              opsm[(D / 4) + (j * 2 + h) * T + threadIdx.x];
        }
      }
    };
    computeRow<D, T>(v, r, red, op, q, s);
  }
  cpWait<0>();
}

// The floor: each thread copies 4 chunks of 16 bytes, loads before stores
// (n a multiple of 512 here).
__global__ void copy16(const uint4 *a, uint4 *b, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x * 4 + threadIdx.x;
  uint4 v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k)
    v[k] = a[i + k * blockDim.x];
#pragma unroll
  for (int k = 0; k < 4; ++k)
    b[i + k * blockDim.x] = v[k];
}

static float timeIt(const char *what, auto launch, int iters = 30) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i)
    launch();
  CK(cudaGetLastError());
  std::vector<float> t;
  for (int rep = 0; rep < 5; ++rep) {
    CK(cudaEventRecord(a));
    for (int i = 0; i < iters; ++i)
      launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.f / iters);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  (void)what;
  return t[2];
}

struct Bufs {
  uint4 *x;
  float *sc, *sh;
  uint2 *q;
  float *s;
};

template <int D, int T> void runD(int sms) {
  const int rows = (128 << 20) / (D * 2);
  Bufs d;
  size_t xb = (size_t)rows * D * 2, qb = (size_t)rows * D;
  CK(cudaMalloc(&d.x, xb));
  CK(cudaMalloc(&d.sc, D * 4));
  CK(cudaMalloc(&d.sh, D * 4));
  CK(cudaMalloc(&d.q, qb));
  CK(cudaMalloc(&d.s, rows * 4));
  std::vector<__nv_bfloat16> hx((size_t)rows * D);
  std::vector<float> hsc(D), hsh(D);
  unsigned st = 12345u;
  auto rnd = [&] {
    st = st * 1664525u + 1013904223u;
    return (st >> 8) * (1.f / 16777216.f) - 0.5f;
  };
  for (size_t i = 0; i < hx.size(); ++i)
    hx[i] = __float2bfloat16(rnd() * 4.f + ((i / D) % 7) * 0.1f);
  for (int i = 0; i < D; ++i) {
    hsc[i] = rnd() * 0.5f;
    hsh[i] = rnd() * 0.2f;
  }
  CK(cudaMemcpy(d.x, hx.data(), xb, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.sc, hsc.data(), D * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.sh, hsh.data(), D * 4, cudaMemcpyHostToDevice));

  // Host reference of the scales (double), and MODE 0's outputs.
  rowPerCta<D, T, false><<<rows, T>>>(d.x, d.sc, d.sh, d.q, d.s, rows, 0.f);
  CK(cudaDeviceSynchronize());
  std::vector<unsigned char> q0(qb), qi(qb);
  std::vector<float> s0(rows), si(rows);
  CK(cudaMemcpy(q0.data(), d.q, qb, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(s0.data(), d.s, rows * 4, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int r = 0; r < rows; r += 97) {
    double m = 0, v = 0, am = 0;
    for (int i = 0; i < D; ++i)
      m += __bfloat162float(hx[(size_t)r * D + i]);
    m /= D;
    for (int i = 0; i < D; ++i) {
      double c = __bfloat162float(hx[(size_t)r * D + i]) - m;
      v += c * c;
    }
    double rs = 1 / std::sqrt(v / D + kEps);
    for (int i = 0; i < D; ++i) {
      double y = (__bfloat162float(hx[(size_t)r * D + i]) - m) * rs *
                     (1 + (double)hsc[i]) +
                 hsh[i];
      am = std::max(am, std::fabs(y));
    }
    double sref = std::max(am / 448, (double)kSMin);
    worst = std::max(worst, std::fabs(s0[r] - sref) / sref);
  }
  std::printf("D=%d rows=%d T=%d: MODE 0 scale vs host double: max rel %.2e "
              "%s\n",
              D, rows, T, worst, worst < 1e-5 ? "ok" : "FAILED");

  size_t total = xb + qb + rows * 4;
  size_t n16 = total / 2 / 16 / 512 * 512;
  uint4 *ca, *cb;
  CK(cudaMalloc(&ca, n16 * 16));
  CK(cudaMalloc(&cb, n16 * 16));
  CK(cudaMemset(ca, 1, n16 * 16));
  float copyUs =
      timeIt("copy", [&] { copy16<<<n16 / 512, 128>>>(ca, cb, n16); });
  float baseUs = timeIt("mode0", [&] {
    rowPerCta<D, T, false><<<rows, T>>>(d.x, d.sc, d.sh, d.q, d.s, rows, 0.f);
  });
  float noopUs = timeIt("noop", [&] {
    rowPerCta<D, T, true><<<rows, T>>>(d.x, d.sc, d.sh, d.q, d.s, rows, 0.f);
  });
  std::printf("  copy %.1f us (%.2f TB/s); mode 0: %.1f us = %.1f%%; "
              "no operands: %.1f us = %.1f%%\n",
              copyUs, total / copyUs * 1e-6, baseUs, 100 * copyUs / baseUs,
              noopUs, 100 * copyUs / noopUs);

  auto check = [&](const char *name) {
    CK(cudaMemcpy(qi.data(), d.q, qb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(si.data(), d.s, rows * 4, cudaMemcpyDeviceToHost));
    bool same = std::memcmp(qi.data(), q0.data(), qb) == 0 &&
                std::memcmp(si.data(), s0.data(), rows * 4) == 0;
    if (!same)
      std::printf("  %s: outputs DIFFER from mode 0\n", name);
    return same;
  };
  auto one = [&](auto kernel, int stages, int mode) {
    size_t smem = (mode == 4 ? 0 : (size_t)stages * D * 2) +
                  (mode == 3 ? (size_t)D * 8 : 0);
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)smem));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, T, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kernel));
    int grid = std::min(rows, per * sms);
    CK(cudaMemset(d.q, 0, qb));
    kernel<<<grid, T, smem>>>(d.x, d.sc, d.sh, d.q, d.s, rows, rows);
    CK(cudaDeviceSynchronize());
    char name[64];
    std::snprintf(name, sizeof name, "mode %d stages %d", mode, stages);
    bool ok = check(name);
    float us = timeIt(name, [&] {
      kernel<<<grid, T, smem>>>(d.x, d.sc, d.sh, d.q, d.s, rows, rows);
    });
    std::printf("  %s: %d regs, %d CTAs/SM, %.1f us = %.1f%% %s\n", name,
                fa.numRegs, per, us, 100 * copyUs / us, ok ? "" : "WRONG");
  };
  one(persistent<D, T, 2, 1>, 2, 1);
  one(persistent<D, T, 2, 2>, 2, 2);
  one(persistent<D, T, 2, 3>, 2, 3);
  one(persistent<D, T, 3, 2>, 3, 2);
  one(persistent<D, T, 1, 4>, 1, 4);
  CK(cudaFree(ca));
  CK(cudaFree(cb));
  CK(cudaFree(d.x));
  CK(cudaFree(d.sc));
  CK(cudaFree(d.sh));
  CK(cudaFree(d.q));
  CK(cudaFree(d.s));
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  // T = D / 32 is normfuse's schedule for this kernel (4 chunks of 8);
  // D / 16 holds half as many elements per thread.
  int sms = p.multiProcessorCount;
  runD<2048, 64>(sms);
  runD<2048, 128>(sms);
  runD<4096, 128>(sms);
  runD<4096, 256>(sms);
  runD<8192, 256>(sms);
  runD<8192, 512>(sms);
  runD<16384, 512>(sms);
  runD<16384, 1024>(sms);
  return 0;
}
