// The log of a training run: lines to the terminal and to the run's log.txt.
#pragma once

#include <cstdio>
#include <string>

namespace qgml::app {

// Lines to the terminal (unless quiet) and to the run's log.txt.
class Log {
 public:
  Log(bool quiet) : quiet_(quiet) {}
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;
  ~Log();
  // Appends to `path`; O_NOFOLLOW: a link planted at log.txt would have the log appended to its target.
  void open(const std::string& path);
  void line(const std::string& s);
  // To log.txt only (the terminal gets it from the caller, e.g. a fatal error from main).
  void file_line(const std::string& s);
  bool quiet() const { return quiet_; }

 private:
  bool quiet_;
  std::FILE* file_ = nullptr;
};

}  // namespace qgml::app
