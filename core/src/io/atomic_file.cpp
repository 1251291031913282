#include "qgml/io/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

#include "qgml/common/file_error.hpp"

namespace qgml {

namespace {
std::string system_error(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}
}  // namespace

void write_file_atomically(const std::string& path, const void* data, std::size_t size) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw FileError(system_error("cannot create", tmp));
  const bool written = std::fwrite(data, 1, size, f) == size;
  const int write_errno = errno;
  const bool flushed = written && std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !flushed || !closed) {
    errno = !written ? write_errno : flush_errno;
    const std::string msg = system_error("cannot write", path);
    std::remove(tmp.c_str());
    throw FileError(msg + " (the previous file, if any, is unchanged)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string msg = system_error("cannot rename the temporary file onto", path);
    std::remove(tmp.c_str());
    throw FileError(msg);
  }
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  write_file_atomically(path, contents.data(), contents.size());
}

}  // namespace qgml
