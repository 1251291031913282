// qgml generate --data.generator NAME [--data.key value ...] --out X.csv|X.npy: the points a run would
// train on (the data.* settings with their defaults), written to a file, e.g. for other estimators on
// the same points (perf/dimension_benchmark.py). data.standardize applies only when set to true.
#include <Kokkos_Core.hpp>

#include <cstdio>

#include "qgml/common/error.hpp"
#include "qgml/io/data_io.hpp"

#include "commands.hpp"
#include "data/data_source.hpp"
#include "settings/config.hpp"

namespace qgml::app {

int generate_command(const std::vector<std::string>& args) {
  std::string out;
  std::vector<std::pair<std::string, std::string>> overrides;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) throw Error("qgml generate: unexpected argument '" + a + "'");
    const auto [key, value] = take_option(args, i, "qgml generate: ");
    if (key == "out") {
      out = value;
    } else {
      if (key.rfind("data.", 0) != 0)
        throw Error("qgml generate: --" + key + ": only data.* settings and --out are accepted");
      overrides.emplace_back(key, value);
    }
  }
  if (out.empty()) throw Error("qgml generate: --out X.csv or X.npy is required");
  DataSection settings = read_data_settings(load_config("", overrides));
  if (!settings.file.empty()) throw Error("qgml generate: data.file is set; generate writes a generator's points");
  if (!settings.standardize) settings.standardize = false;  // auto: the generator's raw points
  using Exec = Kokkos::DefaultExecutionSpace;
  const auto points = load_data<double>(Exec(), settings);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), points);
  HostData data;
  data.rows = int(host.extent(0));
  data.cols = int(host.extent(1));
  data.values.resize(std::size_t(data.rows) * data.cols);
  for (int r = 0; r < data.rows; ++r)
    for (int k = 0; k < data.cols; ++k) data(r, k) = host(r, k);
  const std::string ext = out.size() >= 4 ? out.substr(out.size() - 4) : "";
  if (ext == ".npy")
    write_points_npy(out, data);
  else if (ext == ".csv")
    write_points_csv(out, data, true);
  else
    throw Error("qgml generate: --out '" + out + "': expected a .csv or .npy file name");
  std::printf("%d points in R^%d (%s, noise %g, seed %llu) written to %s\n", data.rows, data.cols,
              settings.generator.c_str(), settings.noise, (unsigned long long)settings.seed, out.c_str());
  return 0;
}

}  // namespace qgml::app
