// Loops over the lanes of a pack (the W matrices or points that one thread handles in SIMD lockstep:
// linalg/hermitian_eigensolver_packed.hpp, train/loss_gradient_packed.hpp).
//
// QGML_LANES(q, W) { ... } runs q = 0 .. W - 1 and tells the compiler the iterations are independent
// (the arrays of one loop never overlap partially), so it vectorises without run-time alias checks.
// Reductions over the lanes are never written inside such a loop.
// QGML_NOINLINE keeps a rarely taken helper out of line (inlined, its branches can keep the compiler
// from vectorising the loops around the call site).
#pragma once

#if defined(_OPENMP) && !defined(__CUDACC__)
#define QGML_LANES(q, W) _Pragma("omp simd") for (int q = 0; q < (W); ++q)
#elif defined(__clang__)
#define QGML_LANES(q, W) _Pragma("clang loop vectorize(assume_safety)") for (int q = 0; q < (W); ++q)
#elif defined(__GNUC__) && !defined(__CUDACC__) && !defined(__INTEL_COMPILER)
#define QGML_LANES(q, W) _Pragma("GCC ivdep") for (int q = 0; q < (W); ++q)
#else
#define QGML_LANES(q, W) for (int q = 0; q < (W); ++q)
#endif

#if defined(__CUDACC__)
#define QGML_NOINLINE __noinline__
#elif defined(__GNUC__) || defined(__clang__)
#define QGML_NOINLINE __attribute__((noinline))
#else
#define QGML_NOINLINE
#endif
