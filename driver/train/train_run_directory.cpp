// The run directory of qgml train (train_run_directory.hpp).
#include "train/train_run_directory.hpp"

#include <filesystem>

#include "qgml/io/atomic_file.hpp"

#include "run/run_directory.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

std::string open_run_directory(const Config& resolved, const RunSettings& s, const std::string& config_path,
                               const std::string& resume_dir, Communicator& comm) {
  if (!resume_dir.empty()) return resume_dir;
  std::string run_dir;
  run_collectively(comm, [&] {
    if (comm.rank() != 0) return;
    std::string name = s.output.name;
    if (name.empty()) {
      const std::string& file = s.data.file;
      name = !config_path.empty()    ? fs::path(config_path).stem().string()
             : !file.empty()         ? fs::path(file).stem().string()
             : !s.data.array.empty() ? std::string("array")
                                     : s.data.generator;
      // A file's name may hold control characters (a newline, a terminal escape): not in the run's name.
      for (char& ch : name)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '_';
    }
    run_dir = create_run_directory(s.output.directory, name);
    write_file_atomically((fs::path(run_dir) / "config.yaml").string(), config_yaml(resolved));
  });
  return comm.broadcast(run_dir, 0);
}

}  // namespace qgml::app
