// qgml::Communicator over MPI. Every MPI call is checked: a failure throws qgml::Error naming the call
// and MPI's error string (the communicator is duplicated and set to MPI_ERRORS_RETURN).
#pragma once

#include <mpi.h>
#include <string>
#include <vector>

#include "qgml/parallel/communicator.hpp"

namespace qgml::mpi {

// Initialises MPI (MPI_THREAD_FUNNELED: only the thread that calls qgml makes MPI calls) unless the
// application already did, and finalises it on destruction if it initialised it. For programs; a
// library embedding qgml keeps its own MPI_Init.
class Environment {
 public:
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  bool owns_ = false;
};

// How the gradient all-reduce reaches device memory: through a host mirror, or by handing MPI the
// device pointer (only for GPU-aware MPI builds, e.g. Open MPI with UCX and CUDA support).
enum class DeviceBuffers { host_mirror, gpu_aware };

class Communicator final : public qgml::Communicator {
 public:
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD, DeviceBuffers device = DeviceBuffers::host_mirror,
                        bool device_is_host = true);
  ~Communicator() override;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(double* data, std::size_t count, bool device_memory) override;
  bool accepts_device_memory() const override { return device_is_host_ || device_ == DeviceBuffers::gpu_aware; }
  void allreduce_sum(std::int64_t* data, std::size_t count) override;
  void allreduce_max(std::int64_t* data, std::size_t count) override;
  std::vector<double> gather_to_root(const std::vector<double>& local) override;
  std::string broadcast(const std::string& text, int root) override;
  std::string agree_on_error(const std::string& local_error) override;
  [[noreturn]] void abort(int code) override;

  MPI_Comm comm() const { return comm_; }
  void set_device_buffers(DeviceBuffers device) { device_ = device; }
  // Whether this Open MPI build reports CUDA support (MPIX_Query_cuda_support), else false.
  static bool gpu_aware_available();

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  DeviceBuffers device_ = DeviceBuffers::host_mirror;
  bool device_is_host_ = true;
};

}  // namespace qgml::mpi
