// int8 by int8 products for the compiled decoder step (`aiayn.decode.int8_kernel`).
//
// y (M, N) = x (M, K) W^T: each row of x is quantized on the fly to int8 with its own scale
// (absmax / 127), W is int8 with one scale per output row, the products sum in int32 and the
// result is scaled back to bf16. What CTranslate2's int8 does, as a PyTorch operator that
// AOTInductor calls from a compiled step (PyTorch's own one-row int8 products are slower than
// its weight-only bf16 kernel: experiments/decode_compile).
//
// W is packed once in blocks of (16 outputs, 4 inputs): a 64-byte block holds 4 inputs of 16
// outputs (the blocks ordered by outputs, then inputs), so one
// broadcast of 4 input bytes meets 16 outputs in one instruction (vpdpbusd with AVX-512 VNNI,
// vpmaddubsw + vpmaddwd with AVX2). The input's signs move onto the weights (|x| . sign(x) w),
// so the unsigned-by-signed instructions neither saturate (|x|, |w| <= 127) nor need a zero
// point. Built for the CPU it runs on (-march=native), as inductor builds a compiled step.

#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr int64_t kRows = 16;   // outputs a block
constexpr int64_t kInputs = 4;  // inputs a block
constexpr int64_t kUnroll = 4;  // blocks summed side by side (independent accumulators)

// (N, K) int8 -> (N', K') int8 in blocks, N' and K' the next multiples of 16 and 4 (zeros): the
// bytes of (N'/16, K'/4, 16, 4), viewed as (N', K') so that rows 16i..16i+15 are the i-th
// block row (a slice of whole blocks is a slice of rows) and a shape says the matrix's size.
torch::Tensor pack(const torch::Tensor& w) {
  TORCH_CHECK(w.dim() == 2 && w.scalar_type() == torch::kInt8, "pack: an (N, K) int8 matrix");
  // -128 has no positive twin: the signs moved onto the weights would overflow
  TORCH_CHECK(w.numel() == 0 || w.min().item<int8_t>() > -128, "pack: int8 weights in [-127, 127]");
  const int64_t N = w.size(0), K = w.size(1);
  const int64_t NB = (N + kRows - 1) / kRows, G = (K + kInputs - 1) / kInputs;
  auto padded = torch::zeros({NB * kRows, G * kInputs}, w.options());
  padded.narrow(0, 0, N).narrow(1, 0, K).copy_(w);
  return padded.view({NB, kRows, G, kInputs}).permute({0, 2, 1, 3}).contiguous().view(
      {NB * kRows, G * kInputs});
}

// Row x (K floats) -> int8 (|x| and its signs as separate bytes); returns its scale.
float quantize_row(const at::BFloat16* x, int64_t K, int8_t* q) {
  float amax = 0.f;
  for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::fabs(float(x[k])));
  const float scale = amax > 0.f ? amax / 127.f : 1.f;
  const float inv = 1.f / scale;
  for (int64_t k = 0; k < K; ++k) q[k] = static_cast<int8_t>(std::nearbyint(float(x[k]) * inv));
  return scale;
}

// int32 sums of blocks nb0 .. nb0 + count - 1 (count <= kUnroll) for one quantized row q.
inline void sum_blocks(const int8_t* q, const int8_t* w, int64_t G, int64_t nb0, int64_t count,
                       int32_t* out) {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  __m512i acc[kUnroll];
  for (int64_t u = 0; u < count; ++u) acc[u] = _mm512_setzero_si512();
  const __m512i zero = _mm512_setzero_si512();
  for (int64_t g = 0; g < G; ++g) {
    int32_t four;
    std::memcpy(&four, q + g * kInputs, sizeof four);
    const __m512i xv = _mm512_set1_epi32(four);
    const __mmask64 negative = _mm512_movepi8_mask(xv);
    const __m512i magnitude = _mm512_abs_epi8(xv);
    for (int64_t u = 0; u < count; ++u) {
      __m512i wv = _mm512_loadu_si512(w + ((nb0 + u) * G + g) * kRows * kInputs);
      wv = _mm512_mask_sub_epi8(wv, negative, zero, wv);
      acc[u] = _mm512_dpbusd_epi32(acc[u], magnitude, wv);
    }
  }
  for (int64_t u = 0; u < count; ++u) _mm512_storeu_si512(out + u * kRows, acc[u]);
#elif defined(__AVX2__)
  __m256i lo[kUnroll], hi[kUnroll];
  for (int64_t u = 0; u < count; ++u) lo[u] = hi[u] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t g = 0; g < G; ++g) {
    int32_t four;
    std::memcpy(&four, q + g * kInputs, sizeof four);
    const __m256i xv = _mm256_set1_epi32(four);
    const __m256i magnitude = _mm256_sign_epi8(xv, xv);
    for (int64_t u = 0; u < count; ++u) {
      const int8_t* b = w + ((nb0 + u) * G + g) * kRows * kInputs;
      const __m256i w0 = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i*)b), xv);
      const __m256i w1 = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i*)(b + 32)), xv);
      lo[u] = _mm256_add_epi32(lo[u], _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, w0), ones));
      hi[u] = _mm256_add_epi32(hi[u], _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, w1), ones));
    }
  }
  for (int64_t u = 0; u < count; ++u) {
    _mm256_storeu_si256((__m256i*)(out + u * kRows), lo[u]);
    _mm256_storeu_si256((__m256i*)(out + u * kRows + 8), hi[u]);
  }
#else
  for (int64_t u = 0; u < count; ++u)
    for (int64_t r = 0; r < kRows; ++r) {
      int32_t total = 0;
      for (int64_t g = 0; g < G; ++g)
        for (int64_t i = 0; i < kInputs; ++i)
          total += int32_t(q[g * kInputs + i]) *
                   int32_t(w[(((nb0 + u) * G + g) * kRows + r) * kInputs + i]);
      out[u * kRows + r] = total;
    }
#endif
}

// x (M, K) bf16, packed W (N', K') int8 (`pack`), scale (N,) bf16 -> (M, N) bf16.
torch::Tensor int8_mm(const torch::Tensor& x, const torch::Tensor& packed,
                      const torch::Tensor& scale) {
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kBFloat16, "int8_mm: x (M, K) bf16");
  TORCH_CHECK(packed.dim() == 2 && packed.scalar_type() == torch::kInt8 &&
                  packed.size(0) % kRows == 0 && packed.size(1) % kInputs == 0 &&
                  packed.is_contiguous(),
              "int8_mm: W packed by int8_kernel.pack");
  TORCH_CHECK(scale.dim() == 1 && scale.scalar_type() == torch::kBFloat16, "int8_mm: scale bf16");
  const int64_t M = x.size(0), K = x.size(1), N = scale.size(0);
  const int64_t NB = packed.size(0) / kRows, G = packed.size(1) / kInputs;
  TORCH_CHECK(G == (K + kInputs - 1) / kInputs && NB == (N + kRows - 1) / kRows,
              "int8_mm: x, W and scale disagree in shape");
  auto xc = x.contiguous();
  auto sc = scale.contiguous();
  auto y = torch::empty({M, N}, xc.options());
  if (M == 0 || N == 0) return y;
  std::vector<int8_t> q(M * G * kInputs, 0);
  std::vector<float> row_scale(M);
  for (int64_t m = 0; m < M; ++m)
    row_scale[m] = quantize_row(xc.data_ptr<at::BFloat16>() + m * K, K, q.data() + m * G * kInputs);
  const int8_t* w = packed.data_ptr<int8_t>();
  const at::BFloat16* s = sc.data_ptr<at::BFloat16>();
  at::BFloat16* out = y.data_ptr<at::BFloat16>();
  const int64_t chunks = (NB + kUnroll - 1) / kUnroll;
  // Threads only where a product is large enough to pay for them (a step's are not at batch 1).
  const int64_t grain = M * N * K >= (int64_t(1) << 20) ? 1 : chunks;
  at::parallel_for(0, chunks, grain, [&](int64_t c0, int64_t c1) {
    int32_t sums[kUnroll * kRows];
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t nb0 = c * kUnroll, count = std::min(kUnroll, NB - nb0);
      for (int64_t m = 0; m < M; ++m) {
        sum_blocks(q.data() + m * G * kInputs, w, G, nb0, count, sums);
        const int64_t n0 = nb0 * kRows, n1 = std::min(N, (nb0 + count) * kRows);
        for (int64_t n = n0; n < n1; ++n)
          out[m * N + n] = at::BFloat16(float(sums[n - n0]) * row_scale[m] * float(s[n]));
      }
    }
  });
  return y;
}

}  // namespace

TORCH_LIBRARY(aiayn_int8, m) {
  m.def("pack(Tensor w) -> Tensor");
  m.def("int8_mm(Tensor x, Tensor packed, Tensor scale) -> Tensor");
}

TORCH_LIBRARY_IMPL(aiayn_int8, CPU, m) {
  m.impl("pack", &pack);
  m.impl("int8_mm", &int8_mm);
}
