// Checked cuSOLVER and CUDA runtime calls: a failed status becomes a qgml::Error that names the call,
// the status (its enumerator name and number) and the problem size (N and batch).
#pragma once

#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <string>

namespace qgml::cusolver {

// "CUSOLVER_STATUS_INVALID_VALUE" etc.; "unknown cusolverStatus_t" for values this build does not know.
const char* status_name(cusolverStatus_t status);

// The message of a failed call: "qgml::cusolver: <call> failed with <status name> (<number>) for N = n,
// batch = b" (cudaError_t: the name and cudaGetErrorString's description).
std::string failure_message(const char* call, cusolverStatus_t status, int n, int batch);
std::string failure_message(const char* call, cudaError_t status, int n, int batch);

// Throws qgml::Error with failure_message and the source location when status is not success.
void check(cusolverStatus_t status, const char* call, int n, int batch, const char* file, int line);
void check(cudaError_t status, const char* call, int n, int batch, const char* file, int line);

}  // namespace qgml::cusolver

// QGML_CUSOLVER_CHECK(cusolverDnZheevd(...), n, batch): the call's text names it in the error.
#define QGML_CUSOLVER_CHECK(call, n, batch) ::qgml::cusolver::check((call), #call, (n), (batch), __FILE__, __LINE__)
