// The outputs of a training run (train_outputs.hpp), for float and double.
#include "train/train_outputs.hpp"

#include <filesystem>

#include "qgml/io/configuration_io.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/plan/kernel_kinds.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

template <class Real>
void write_outputs(const std::string& run_dir, const std::vector<EpochRecord>& history,
                   const MatrixConfiguration<Real, Exec>& config, const Exec& exec, Communicator& comm) {
  const HostMatrices final_matrices = to_host(config, exec);
  run_collectively(comm, [&] {
    if (comm.rank() != 0) return;
    write_history_csv((fs::path(run_dir) / "history.csv").string(), history);
    write_history_json((fs::path(run_dir) / "history.json").string(), history);
    save_matrices((fs::path(run_dir) / "final_matrices.npy").string(), final_matrices, precision_of<Real>);
  });
}

template void write_outputs<float>(const std::string& run_dir, const std::vector<EpochRecord>& history,
                                   const MatrixConfiguration<float, Exec>& config, const Exec& exec,
                                   Communicator& comm);
template void write_outputs<double>(const std::string& run_dir, const std::vector<EpochRecord>& history,
                                    const MatrixConfiguration<double, Exec>& config, const Exec& exec,
                                    Communicator& comm);

}  // namespace qgml::app
