#include "qgml/cusolver/status.hpp"

#include <cstring>

#include "qgml/common/error.hpp"

namespace qgml::cusolver {

namespace {

// The called function's name: the text of the call expression up to its argument list.
std::string call_name(const char* call) {
  const char* paren = std::strchr(call, '(');
  return paren ? std::string(call, paren) : std::string(call);
}

std::string size_text(int n, int batch) { return "N = " + std::to_string(n) + ", batch = " + std::to_string(batch); }

}  // namespace

const char* status_name(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_SUCCESS:
      return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR:
      return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT:
      return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_LICENSE:
      return "CUSOLVER_STATUS_INVALID_LICENSE";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
      return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default:
      return "unknown cusolverStatus_t";
  }
}

std::string failure_message(const char* call, cusolverStatus_t status, int n, int batch) {
  return "qgml::cusolver: " + call_name(call) + " failed with " + status_name(status) + " (" +
         std::to_string(int(status)) + ") for " + size_text(n, batch);
}

std::string failure_message(const char* call, cudaError_t status, int n, int batch) {
  return "qgml::cusolver: " + call_name(call) + " failed with " + cudaGetErrorName(status) + " (" +
         std::to_string(int(status)) + ": " + cudaGetErrorString(status) + ") for " + size_text(n, batch);
}

void check(cusolverStatus_t status, const char* call, int n, int batch, const char* file, int line) {
  if (status != CUSOLVER_STATUS_SUCCESS) throw_error(failure_message(call, status, n, batch), file, line);
}

void check(cudaError_t status, const char* call, int n, int batch, const char* file, int line) {
  if (status != cudaSuccess) throw_error(failure_message(call, status, n, batch), file, line);
}

}  // namespace qgml::cusolver
