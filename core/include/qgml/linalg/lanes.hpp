// The loop over the lanes of a pack (W points whose values are interleaved, value v of lane q at
// v * W + q): no dependence between iterations, so the compiler may vectorise without run-time alias
// checks. Reductions over the lanes are never written inside such a loop.
#pragma once

#ifndef QGML_LANES
#if defined(_OPENMP) && !defined(__CUDACC__)
#define QGML_LANES(q, W) _Pragma("omp simd") for (int q = 0; q < (W); ++q)
#elif defined(__clang__)
#define QGML_LANES(q, W) _Pragma("clang loop vectorize(assume_safety)") for (int q = 0; q < (W); ++q)
#elif defined(__GNUC__) && !defined(__CUDACC__) && !defined(__INTEL_COMPILER)
#define QGML_LANES(q, W) _Pragma("GCC ivdep") for (int q = 0; q < (W); ++q)
#else
#define QGML_LANES(q, W) for (int q = 0; q < (W); ++q)
#endif
#endif
