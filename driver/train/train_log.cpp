// The log of a training run (train_log.hpp).
#include "train/train_log.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "qgml/common/file_error.hpp"

namespace qgml::app {

Log::~Log() {
  if (file_) std::fclose(file_);
}

void Log::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ELOOP)
    throw FileError("log file '" + path + "' is a symbolic link; qgml never writes through links (remove it)");
  if (fd < 0) throw FileError("log file '" + path + "': cannot open: " + std::strerror(errno));
  file_ = ::fdopen(fd, "a");
  if (!file_) ::close(fd);
}

void Log::line(const std::string& s) {
  if (!quiet_) std::printf("%s\n", s.c_str());
  file_line(s);
}

void Log::file_line(const std::string& s) {
  if (file_) {
    std::fprintf(file_, "%s\n", s.c_str());
    std::fflush(file_);
  }
}

}  // namespace qgml::app
