// qgml train --resume: the checks and the record of a resume (run_resume.hpp).
#include "run/run_resume.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"

#include "common/json_file.hpp"
#include "run/run_directory.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

bool no_checkpoint_yet(const std::string& checkpoint_dir) {
  std::error_code ec;
  if (fs::exists(fs::path(checkpoint_dir) / "LATEST", ec)) return false;
  for (const auto& e : fs::directory_iterator(checkpoint_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("epoch-", 0) == 0 && name.rfind("epoch-000000", 0) != 0) return false;
    if (name == "state.json") return false;
  }
  return true;
}

AcceptedResume check_resume(const std::string& run_dir, const std::string& checkpoint_dir, bool fresh,
                            const CheckpointFingerprint& now, const AcceptedChanges& accepted, Log& log,
                            Communicator& comm) {
  CheckpointState saved;
  run_collectively(comm, [&] {
    if (!fresh) {
      saved = read_checkpoint(checkpoint_dir);
      return;
    }
    const Config recorded = load_config((fs::path(run_dir) / "config.yaml").string(), {});
    saved.fingerprint = {now.data, fingerprint_settings(recorded)};  // no points recorded yet
  });
  const std::string against = fresh ? std::string("its config.yaml (no checkpoint yet)")
                                    : "its checkpoint (epoch " + std::to_string(saved.epoch) + ")";
  const std::vector<FingerprintChange> changes = fingerprint_changes(saved.fingerprint, now);
  const bool all = std::find(accepted.begin(), accepted.end(), "all") != accepted.end();
  const auto describe = [&](const FingerprintChange& d) {
    const std::string where = fresh ? "config.yaml" : "the checkpoint";
    return d.key == "data" ? "data: the points differ (hash " + d.before + " in " + where + ", " + d.now + " now)"
                           : d.key + ": '" + d.before + "' in " + where + ", '" + d.now + "' now";
  };
  std::string refused, keys;
  for (const FingerprintChange& d : changes)
    if (!all && std::find(accepted.begin(), accepted.end(), d.key) == accepted.end()) {
      refused += "\n  " + describe(d);
      keys += (keys.empty() ? "" : ",") + d.key;
    }
  if (!refused.empty())
    throw Error("--resume " + run_dir + ": the run differs from " + against + ":" + refused +
                "\nresume with --resume-with-changes " + keys +
                " to accept (recorded in the run), or with the run's own data and settings");
  if (changes.empty() && !all) {
    for (const std::string& key : accepted)
      log.line("--resume-with-changes " + key + ": no such difference (nothing to accept)");
  }
  AcceptedResume out;
  out.epoch = saved.epoch;
  for (const FingerprintChange& d : changes) out.changes.emplace_back(d, describe(d));
  return out;
}

void record_resume(const Config& c, const std::string& run_dir, const AcceptedResume& resume, Log& log,
                   Communicator& comm) {
  for (const auto& [d, description] : resume.changes)
    log.line("resume with changes (accepted) at epoch " + std::to_string(resume.epoch) + ": " + description);
  run_collectively(comm, [&] {
    if (comm.rank() != 0) return;
    const Config recorded = load_config((fs::path(run_dir) / "config.yaml").string(), {});
    bool config_differs = false;
    for (const Setting& s : schema()) config_differs = config_differs || recorded.text(s.key) != c.text(s.key);
    if (config_differs) write_file_atomically((fs::path(run_dir) / "config.yaml").string(), config_yaml(c));
    if (resume.changes.empty()) return;
    const fs::path record = fs::path(run_dir) / "changes.json";
    Json entries = Json::array();
    if (fs::exists(record)) {
      std::ifstream in(record);
      entries = Json::parse(in, nullptr, false);
      if (!entries.is_array()) entries = Json::array();
    }
    Json list = Json::array();
    for (const auto& [d, description] : resume.changes)
      list.push_back({{"key", d.key}, {"checkpoint", d.before}, {"now", d.now}});
    const std::time_t t = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
    entries.push_back({{"epoch", resume.epoch}, {"time", stamp}, {"changes", list}});
    write_json_file(record.string(), entries);
  });
}

}  // namespace qgml::app
