#include "run/run_directory.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qgml/common/file_error.hpp"
#include "qgml/common/random.hpp"
#include "qgml/io/atomic_file.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

void check_run_name(const std::string& name) {
  // No control character either: the name is printed on the terminal and in every message about the run.
  const bool control = std::any_of(name.begin(), name.end(),
                                   [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; });
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos || control) {
    std::string shown = name;
    for (char& ch : shown)
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
    throw Error("output.name = '" + shown +
                "': expected a single directory name (no '/', not '.' or '..', no control character); run "
                "directories are created in output.directory");
  }
}

void refuse_links(const std::string& dir, const std::string& what) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_symlink(ec))
      throw FileError(what + " '" + dir + "': its entry '" + e.path().filename().string() +
                      "' is a symbolic link; qgml never writes through links (remove it)");
}

RunLock::RunLock(const std::string& run_dir, const std::string& what) {
  const std::string path = (fs::path(run_dir) / "lock").string();
  // O_NOFOLLOW: a link planted at the lock's name would have the pid written into its target.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0 && errno == ELOOP)
    throw FileError(what + " '" + run_dir + "': its lock file " + path +
                    " is a symbolic link; qgml never writes through links (remove it)");
  if (fd_ < 0) throw FileError(what + " '" + run_dir + "': cannot open its lock file: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char holder[32] = {0};
    const ssize_t got = ::pread(fd_, holder, sizeof holder - 1, 0);
    std::string pid = got > 0 ? std::string(holder, std::size_t(got)) : std::string("unknown");
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK)
      throw Error(what + " '" + run_dir + "' is in use: another qgml process (pid " + pid + ") holds its lock " + path +
                  "; wait for it to end");
    throw FileError(what + " '" + run_dir + "': cannot lock " + path + ": " + std::strerror(error));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
    // The lock holds without the pid; a second process then names the holder "unknown".
  }
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

RunLock& RunLock::operator=(RunLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void check_writable_directory(const std::string& dir) {
  // A new file (O_EXCL: never an existing file, nor a link's target); a name taken by anything, a
  // planted link included, is passed over for the next.
  const std::string stem = (fs::path(dir) / (".qgml-write-test-" + std::to_string(::getpid()))).string();
  int error = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string probe = attempt == 0 ? stem : stem + "." + std::to_string(attempt);
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
      return;
    }
    error = errno;
    if (error != EEXIST) break;
  }
  throw FileError("output directory '" + dir + "' is not writable: " + std::strerror(error));
}

void prepare_output_directory(const std::string& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw FileError("output directory '" + out + "': cannot create: " + ec.message());
  check_writable_directory(out);
}

namespace {

// The stale temporaries of the directory open at `fd` (named `dir` in the paths returned).
void remove_stale_in(int fd, const std::string& dir, std::vector<std::string>& removed) {
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  for (const std::string& name : names) {
    long pid = 0;
    if (!is_temporary_name(name, pid)) continue;
    // A live process (or one of another user, EPERM) may still rename its temporary into place.
    if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;
    struct stat st;
    if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::unlinkat(::dirfd(d), name.c_str(), 0) == 0) removed.push_back((fs::path(dir) / name).string());
  }
  ::closedir(d);
}

}  // namespace

std::vector<std::string> remove_stale_temporaries(const std::string& dir,
                                                  const std::vector<std::string>& subdirectories) {
  std::vector<std::string> removed;
  // The directory the user named may be a link; its entries are opened without following one.
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return removed;
  for (const std::string& sub : subdirectories) {
    const int sub_fd = ::openat(fd, sub.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub_fd >= 0) remove_stale_in(sub_fd, (fs::path(dir) / sub).string(), removed);
  }
  remove_stale_in(fd, dir, removed);
  return removed;
}

std::string create_run_directory(const std::string& parent, const std::string& name) {
  // A name derived from a data file's stem is one component; the suffix below makes '.' or '..' safe.
  if (name.find('/') != std::string::npos) check_run_name(name);
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw FileError("output directory '" + parent + "': cannot create: " + ec.message());
  check_writable_directory(parent);
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  const auto ticks = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  const std::uint64_t id = mix64(std::uint64_t(ticks) ^ (std::uint64_t(::getpid()) << 32));
  char hex[16];
  std::snprintf(hex, sizeof hex, "%06llx", static_cast<unsigned long long>(id & 0xffffff));
  const fs::path dir = fs::path(parent) / (name + "_" + stamp + "_" + hex);
  if (!fs::create_directory(dir, ec) || ec)
    throw FileError("run directory '" + dir.string() + "': cannot create" + (ec ? ": " + ec.message() : ""));
  return dir.string();
}

}  // namespace qgml::app
