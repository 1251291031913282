// libFuzzer target: the checkpoint reader (qgml::read_checkpoint). LLVMFuzzerInitialize writes one
// valid checkpoint (D = 2, N = 3, epoch 3) with write_checkpoint; each input replaces one of its files
// (LATEST, state.json, matrices.npy, matrices.json, adam_m.npy, adam_v.npy, history.csv, and whatever
// else write_checkpoint writes): the first byte chooses the file, the rest are its new bytes. The file
// is restored afterwards, so every input starts from the valid checkpoint.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "qgml/train/checkpoint.hpp"

#include "fuzz_common.hpp"

namespace {

namespace fs = std::filesystem;

struct Original {
  fs::path path;
  std::vector<std::uint8_t> bytes;
};
std::vector<Original> files;
fs::path root;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  root = qgml::fuzz::scratch() / "checkpoints";
  qgml::CheckpointState s;
  s.matrices = {2, 3, {}};
  for (int k = 0; k < 2; ++k)  // Hermitian: A(i, j) = conj(A(j, i))
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) s.matrices.values.push_back({0.25 * (i + j + k), 0.5 * (j - i)});
  s.adam_m.assign(2 * 3 * 3, 0.125);
  s.adam_v.assign(2 * 3 * 3, 0.0625);
  s.adam_step = 6;
  s.epoch = 3;
  s.seed = 7;
  s.points = 40;
  for (int e = 1; e <= 3; ++e) {
    qgml::EpochRecord r;
    r.epoch = e;
    r.total = 1.0 / e;
    r.reconstruction = 0.5 / e;
    r.batches = 2;
    s.history.push_back(r);
  }
  s.max_epochs = 10;
  qgml::write_checkpoint(root.string(), s);
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) {
      std::ifstream in(e.path(), std::ios::binary);
      files.push_back({e.path(), {std::istreambuf_iterator<char>(in), {}}});
    }
  std::sort(files.begin(), files.end(), [](const Original& a, const Original& b) { return a.path < b.path; });
  (void)qgml::read_checkpoint(root.string());  // the unmodified checkpoint must read
  // QGML_FUZZ_WRITE_SEEDS=DIR writes the seed corpus: one input per file, unmodified.
  if (const char* seeds = std::getenv("QGML_FUZZ_WRITE_SEEDS"))
    for (std::size_t i = 0; i < files.size(); ++i) {
      std::vector<std::uint8_t> input{std::uint8_t(i)};
      input.insert(input.end(), files[i].bytes.begin(), files[i].bytes.end());
      qgml::fuzz::write_file(fs::path(seeds) / files[i].path.filename(), input.data(), input.size());
    }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || files.empty()) return 0;
  const Original& f = files[data[0] % files.size()];
  qgml::fuzz::write_file(f.path, data + 1, size - 1);
  qgml::fuzz::expect_value_or_error([&] {
    const qgml::CheckpointState s = qgml::read_checkpoint(root.string());
    const std::size_t n = std::size_t(s.matrices.D) * std::size_t(s.matrices.N) * std::size_t(s.matrices.N);
    QGML_FUZZ_CHECK(s.matrices.D >= 1 && s.matrices.N >= 1 && s.matrices.values.size() == n);
    QGML_FUZZ_CHECK(s.adam_m.size() == n && s.adam_v.size() == n);
    QGML_FUZZ_CHECK(s.epoch >= 0 && s.adam_step >= 0 && s.points >= 1);
  });
  qgml::fuzz::write_file(f.path, f.bytes.data(), f.bytes.size());
  return 0;
}
