#include "qgml/io/atomic_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "qgml/common/file_error.hpp"

namespace qgml {

namespace {
std::string system_error(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

// A new temporary file beside `path`, opened for writing: O_EXCL never opens an existing file nor
// follows a link planted at the name (another is tried instead); the name stays unique among the
// threads of this process.
int create_temporary(const std::string& path, std::string& tmp) {
  static std::atomic<unsigned long> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid());
    const unsigned long n = counter.fetch_add(1);
    if (n > 0) tmp += "." + std::to_string(n);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

// A decimal number of 1 to `digits` digits without a leading zero at text[begin, end).
bool plain_decimal(const std::string& text, std::size_t begin, std::size_t end, std::size_t digits, long long& value) {
  if (begin >= end || end - begin > digits || text[begin] == '0') return false;
  value = 0;
  for (std::size_t i = begin; i < end; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  return true;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= std::size_t(n);
  }
  return true;
}
}  // namespace

void write_file_atomically(const std::string& path, const void* data, std::size_t size) {
  // A directory at `path` (not a link to one) cannot be replaced: said before any temporary is made.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw FileError("'" + path + "' is a directory; expected the name of a file to write (nothing written)");
  std::string tmp;
  const int fd = create_temporary(path, tmp);
  if (fd < 0) throw FileError(system_error("cannot create", tmp));
  const bool written = write_all(fd, static_cast<const char*>(data), size);
  const int write_errno = errno;
  const bool flushed = written && ::fsync(fd) == 0;
  const int flush_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !flushed || !closed) {
    errno = !written ? write_errno : flush_errno;
    const std::string msg = system_error("cannot write", path);
    ::unlink(tmp.c_str());
    throw FileError(msg + " (the previous file, if any, is unchanged)");
  }
  // rename replaces a link at `path` itself, never its target.
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string msg = system_error("cannot rename the temporary file onto", path);
    ::unlink(tmp.c_str());
    throw FileError(msg);
  }
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  write_file_atomically(path, contents.data(), contents.size());
}

bool is_temporary_name(const std::string& name, long& pid) {
  // The last ".tmp." whose rest is <pid> or <pid>.<n>.
  for (std::size_t at = name.rfind(".tmp."); at != std::string::npos && at > 0; at = name.rfind(".tmp.", at - 1)) {
    const std::size_t begin = at + 5;
    const std::size_t dot = name.find('.', begin);
    long long p = 0, n = 0;
    if (!plain_decimal(name, begin, dot == std::string::npos ? name.size() : dot, 10, p) || p > 2147483647LL) continue;
    if (dot != std::string::npos && !plain_decimal(name, dot + 1, name.size(), 19, n)) continue;
    pid = long(p);
    return true;
  }
  return false;
}

}  // namespace qgml
