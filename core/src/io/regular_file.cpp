#include "regular_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qgml/common/file_error.hpp"

namespace qgml::detail {

int open_regular_file(const std::string& path, const std::string& kind) {
  const auto fail = [&](const std::string& what) { throw FileError(kind + " file '" + path + "': " + what); };
  // O_NONBLOCK: open() of a FIFO without a writer would otherwise wait for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    fail(std::string("cannot stat: ") + std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode)) fail("is a directory");
    fail(std::string("is not a regular file (") +
         (S_ISFIFO(st.st_mode)  ? "a FIFO"
          : S_ISCHR(st.st_mode) ? "a character device"
          : S_ISBLK(st.st_mode) ? "a block device"
                                : "a socket or other special file") +
         "); give a regular file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

FileInputBuffer::~FileInputBuffer() { ::close(fd_); }

FileInputBuffer::int_type FileInputBuffer::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  ssize_t n;
  do {
    n = ::read(fd_, buffer_, sizeof buffer_);
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw FileError(std::string("read error: ") + std::strerror(errno));
  if (n == 0) return traits_type::eof();
  setg(buffer_, buffer_, buffer_ + n);
  return traits_type::to_int_type(*gptr());
}

FileInputBuffer::pos_type FileInputBuffer::seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) {
  // The descriptor is ahead of the reader by the unread part of the buffer.
  if (dir == std::ios_base::cur) off -= off_type(egptr() - gptr());
  const off_t at = ::lseek(fd_, off_t(off),
                           dir == std::ios_base::beg   ? SEEK_SET
                           : dir == std::ios_base::cur ? SEEK_CUR
                                                       : SEEK_END);
  setg(buffer_, buffer_, buffer_);
  return at < 0 ? pos_type(off_type(-1)) : pos_type(off_type(at));
}

FileInputBuffer::pos_type FileInputBuffer::seekpos(pos_type pos, std::ios_base::openmode which) {
  return seekoff(off_type(pos), std::ios_base::beg, which);
}

bool read_bounded_line(std::streambuf& in, std::string& line, std::size_t max_bytes, long long line_number,
                       const std::string& path, const std::string& kind) {
  line.clear();
  using traits = std::streambuf::traits_type;
  for (auto c = in.sbumpc();; c = in.sbumpc()) {
    if (traits::eq_int_type(c, traits::eof())) return !line.empty();
    if (traits::to_char_type(c) == '\n') return true;
    if (line.size() >= max_bytes)
      throw FileError(kind + " file '" + path + "': line " + std::to_string(line_number) + " is longer than " +
                      std::to_string(max_bytes) + " bytes (not a text file of points?)");
    line.push_back(traits::to_char_type(c));
  }
}

}  // namespace qgml::detail
