// Run directories: runs/<name>_<YYYYmmdd-HHMMSS>_<id>/ holding everything one run writes, and the
// run's config.yaml.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "settings/config.hpp"

namespace qgml::app {

// Throws qgml::Error unless `name` (output.name) is a single path component: not empty, not '.' or
// '..', no '/'. A run directory is always created inside output.directory.
void check_run_name(const std::string& name);

// Throws qgml::FileError when one of the entries of `dir` is a symbolic link: a run or sample directory
// is written in place, and a link planted in it would redirect a write (or a deletion) outside it. The
// directory itself is the one the user named and may be a link. `what` names it in the message.
void refuse_links(const std::string& dir, const std::string& what);

// Creates a new run directory under `parent` and returns its path; throws qgml::Error naming the
// directory when it cannot be created or written.
std::string create_run_directory(const std::string& parent, const std::string& name);

// An exclusive lock on a run directory (flock on its file `lock`, which holds the holder's pid), held
// until destruction: one qgml process at a time trains in a run directory (or writes a sample directory).
class RunLock {
 public:
  RunLock() = default;
  // Throws qgml::Error naming the directory (as `what`, e.g. "sample directory") and the holder's pid
  // when another process holds the lock.
  explicit RunLock(const std::string& run_dir, const std::string& what = "run directory");
  ~RunLock();
  RunLock(RunLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  RunLock& operator=(RunLock&& o) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

// Throws qgml::Error unless `dir` exists and a new file can be created in it (the probe is created with
// O_EXCL | O_NOFOLLOW under a fresh name and removed).
void check_writable_directory(const std::string& dir);

// Creates the output directory `out` of qgml estimate or qgml eval (with its parents) where it is missing
// and checks that a new file can be created in it; throws qgml::FileError naming it otherwise.
void prepare_output_directory(const std::string& out);

// Removes the temporaries that an interrupted write of an ended process left (a crash between the
// temporary's creation and its rename) in `dir` and in each of its entries `subdirectories` (e.g.
// "checkpoints", opened without following a link): only regular files (never a link, a directory or
// anything else) whose name is_temporary_name, and only when the pid in the name is not a live process.
// Call it while holding the directory's RunLock, so that no other qgml process writes there. Returns
// the paths removed; a file that cannot be removed is left alone.
std::vector<std::string> remove_stale_temporaries(const std::string& dir,
                                                  const std::vector<std::string>& subdirectories = {});

// A YAML scalar that reads back as exactly `text`: plain where that is unambiguous (letters, digits
// and . _ + - /, not starting with a sign or dot that YAML could take otherwise), else double-quoted
// with \ " and every control character escaped (YAML 1.2, 7.3.1).
inline std::string yaml_scalar(const std::string& text) {
  bool plain = !text.empty();
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    plain = plain && ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || ch == '.' ||
                      ch == '_' || ch == '+' || ch == '-' || ch == '/');
  }
  if (plain && (text[0] == '-' || text[0] == '.' || text[0] == '+'))
    plain = text.size() > 1 && text[1] >= '0' && text[1] <= '9';
  if (plain) return text;
  std::string out = "\"";
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20 || u == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", unsigned(u));
      out += esc;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// The resolved configuration as YAML that load_config reads back to the same values: every setting,
// values through yaml_scalar, text settings always quoted, the origin as a comment (control characters
// replaced by spaces, so that the comment stays on its line).
inline std::string config_yaml(const Config& c) {
  std::string out, section;
  for (const Setting& s : schema()) {
    const bool top = s.key.find('.') == std::string::npos;  // a top-level setting (task)
    const std::string sec = top ? "" : s.key.substr(0, s.key.find('.'));
    if (sec != section && !top) {
      out += sec + ":\n";
      section = sec;
    }
    const std::string& v = c.text(s.key);
    std::string scalar = yaml_scalar(v);
    if (s.type == SettingType::text && scalar[0] != '"') scalar = "\"" + v + "\"";
    std::string origin = c.origin(s.key);
    for (char& ch : origin)
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
    out += (top ? s.key : "  " + s.key.substr(sec.size() + 1)) + ": " + scalar + "  # " + origin + "\n";
  }
  return out;
}

}  // namespace qgml::app
