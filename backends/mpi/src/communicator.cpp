#include "qgml/mpi/communicator.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <climits>
#include <cstdint>

namespace qgml::mpi {
namespace {

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string("qgml::mpi: ") + call + " failed: " + std::string(text, std::size_t(length)));
}

#define QGML_MPI_CHECK(call) check((call), #call)

int as_count(std::size_t count) {
  QGML_REQUIRE(count <= std::size_t(INT_MAX),
               "qgml::mpi: " + std::to_string(count) + " values exceed the largest MPI count (INT_MAX)");
  return int(count);
}

}  // namespace

Environment::Environment(int& argc, char**& argv) {
  int initialized = 0;
  QGML_MPI_CHECK(MPI_Initialized(&initialized));
  if (initialized) return;
  int provided = 0;
  QGML_MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
  owns_ = true;
  QGML_REQUIRE(
      provided >= MPI_THREAD_FUNNELED,
      "qgml::mpi: the MPI library does not provide MPI_THREAD_FUNNELED (got level " + std::to_string(provided) + ")");
}

Environment::~Environment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

Communicator::Communicator(MPI_Comm comm, DeviceBuffers device, bool device_is_host)
    : device_(device), device_is_host_(device_is_host) {
  QGML_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  QGML_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  QGML_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  QGML_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

bool Communicator::gpu_aware_available() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

void Communicator::allreduce_sum(double* data, std::size_t count, bool device_memory) {
  QGML_REQUIRE(!device_memory || accepts_device_memory(),
               "qgml::mpi::Communicator: a device buffer was passed but MPI is used through host mirrors "
               "(mpi.gpu_aware is off)");
  QGML_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, as_count(count), MPI_DOUBLE, MPI_SUM, comm_));
}

void Communicator::allreduce_sum(std::int64_t* data, std::size_t count) {
  QGML_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, as_count(count), MPI_INT64_T, MPI_SUM, comm_));
}

void Communicator::allreduce_max(std::int64_t* data, std::size_t count) {
  QGML_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, as_count(count), MPI_INT64_T, MPI_MAX, comm_));
}

std::vector<double> Communicator::gather_to_root(const std::vector<double>& local) {
  const int n = as_count(local.size());
  std::vector<int> counts(rank_ == 0 ? size_ : 0), offsets(rank_ == 0 ? size_ : 0);
  QGML_MPI_CHECK(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_));
  std::vector<double> all;
  if (rank_ == 0) {
    std::size_t total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[r] = as_count(total);
      total += std::size_t(counts[r]);
    }
    all.resize(total);
  }
  QGML_MPI_CHECK(
      MPI_Gatherv(local.data(), n, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0, comm_));
  return all;
}

std::string Communicator::broadcast(const std::string& text, int root) {
  long long length = static_cast<long long>(text.size());
  QGML_MPI_CHECK(MPI_Bcast(&length, 1, MPI_LONG_LONG, root, comm_));
  std::string out = rank_ == root ? text : std::string(std::size_t(length), '\0');
  QGML_MPI_CHECK(MPI_Bcast(out.data(), as_count(std::size_t(length)), MPI_CHAR, root, comm_));
  return out;
}

std::string Communicator::agree_on_error(const std::string& local_error) {
  // The lowest failing rank (size_ when none failed) broadcasts its message.
  int mine = local_error.empty() ? size_ : rank_, first = size_;
  QGML_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm_));
  if (first == size_) return {};
  const std::string message = broadcast(local_error, first);
  return size_ > 1 ? "rank " + std::to_string(first) + " of " + std::to_string(size_) + ": " + message : message;
}

void Communicator::abort(int code) {
  MPI_Abort(comm_, code);
  std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest if it does
}

}  // namespace qgml::mpi
