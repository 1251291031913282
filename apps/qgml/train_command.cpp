// qgml train CONFIG.yaml [--section.key value ...] [--resume RUN_DIR] [--quiet]
#include <cctype>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "qgml/common/error.hpp"

#include "commands.hpp"
#include "run/run_resume.hpp"
#include "settings/config.hpp"
#include "train/train_run.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

int train_command(const std::vector<std::string>& args) {
  std::string config_path, data_path, resume;
  AcceptedChanges accepted;
  bool with_changes = false;
  bool quiet = false;
  std::vector<std::pair<std::string, std::string>> overrides;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--resume" || a.rfind("--resume=", 0) == 0) {
      if (a == "--resume" && i + 1 >= args.size()) throw Error("--resume needs a run directory");
      resume = a == "--resume" ? args[++i] : a.substr(9);
    } else if (a == "--resume-with-changes" || a.rfind("--resume-with-changes=", 0) == 0) {
      if (a == "--resume-with-changes" && i + 1 >= args.size())
        throw Error("--resume-with-changes needs KEY[,KEY...] (data, a setting, or all)");
      std::stringstream list(a == "--resume-with-changes" ? args[++i] : a.substr(22));
      for (std::string key; std::getline(list, key, ',');) {
        if (key != "all" && key != "data") {
          const Setting* known = nullptr;
          for (const Setting& s : schema()) known = s.key == key ? &s : known;
          if (!known)
            throw Error("--resume-with-changes: '" + key +
                        "' is not data, all or a setting (section.key, e.g. training.lr)");
        }
        accepted.push_back(key);
      }
      with_changes = true;
    } else if (a.rfind("--", 0) == 0) {
      overrides.push_back(take_option(args, i));
    } else if (config_path.empty() && data_path.empty()) {
      std::string ext = fs::path(a).extension().string();
      for (char& ch : ext) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      if (ext == ".csv" || ext == ".npy")
        data_path = a;
      else if (ext == ".yaml" || ext == ".yml")
        config_path = a;
      else
        throw Error("'" + a + "': expected a data file (.csv, .npy) or a config file (.yaml, .yml)");
    } else {
      throw Error("unexpected argument '" + a + "' (one data or config file, then --section.key value overrides)");
    }
  }
  if (!data_path.empty()) {
    for (const auto& [key, value] : overrides)
      if (key == "data.file") throw Error("give the data file once: '" + data_path + "' and --data.file " + value);
    overrides.insert(overrides.begin(), {"data.file", data_path});
  }
  if (with_changes && resume.empty()) throw Error("--resume-with-changes is for --resume RUN_DIR");
  if (!resume.empty()) {
    if (!config_path.empty() || !data_path.empty())
      throw Error("--resume takes the run directory's own config; give no config or data file");
  } else if (config_path.empty() && data_path.empty()) {
    bool data_given = false;
    for (const auto& [key, value] : overrides) data_given = data_given || key.rfind("data.", 0) == 0;
    if (!data_given)
      throw Error(
          "qgml train needs data: qgml train DATA.csv (or .npy), --data.file FILE, --data.generator NAME, "
          "a config file (see examples/configs/) or --resume RUN_DIR");
  }
  TrainRequest request;
  request.config_path = config_path;
  request.overrides = overrides;
  request.resume_dir = resume;
  request.accepted_changes = accepted;
  request.quiet = quiet;
  request.handle_signals = true;
  request.print_result = true;
  return run_train(request).exit_code;
}

}  // namespace qgml::app
