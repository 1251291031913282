// What a sampling run draws from (sample_model.hpp).
#include "sample/sample_model.hpp"

#include <cstdint>
#include <filesystem>

#include "qgml/common/error.hpp"
#include "qgml/train/checkpoint.hpp"

#include "common/json_file.hpp"
#include "common/text_file.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

Affine run_standardization(const std::string& run_dir, int d) {
  Affine a;
  a.mean.assign(std::size_t(d), 0.0);
  const fs::path p = fs::path(run_dir) / "standardization.json";
  if (!fs::exists(p)) return a;
  Json j;
  try {
    j = Json::parse(read_text(p.string()));
    a.mean = j.at("mean").get<std::vector<double>>();
    a.scale = j.at("scale").get<double>();
  } catch (const Json::exception& e) {
    throw Error("'" + p.string() + "': expected {\"mean\": [D numbers], \"scale\": number} (" + e.what() + ")");
  }
  if (int(a.mean.size()) != d || !(a.scale > 0))
    throw Error("'" + p.string() + "': mean has " + std::to_string(a.mean.size()) +
                " values for D = " + std::to_string(d) + " and scale must be > 0");
  return a;
}

std::string model_fingerprint(const HostMatrices& m, const Affine& a) {
  const std::int64_t shape[2] = {m.D, m.N};
  std::uint64_t h = fnv1a64(shape, sizeof shape);
  h = fnv1a64(m.values.data(), m.values.size() * sizeof(m.values[0]), h);
  h = fnv1a64(a.mean.data(), a.mean.size() * sizeof(double), h);
  h = fnv1a64(&a.scale, sizeof a.scale, h);
  return hex64(h);
}

}  // namespace qgml::app
