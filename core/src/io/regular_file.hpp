// Input files opened once, as regular files only: a FIFO, a device (/dev/zero) or a socket named as
// data would block in open() or read without end. The file is opened without blocking, checked with
// fstat on the opened descriptor (no window between check and open), and then read through an
// std::streambuf over that descriptor.
#pragma once

#include <cstddef>
#include <streambuf>
#include <string>

namespace qgml::detail {

// The descriptor of `path` opened for reading (O_CLOEXEC, blocking again once checked); throws
// qgml::FileError "<kind> file '<path>': ..." when it cannot be opened, is a directory or is not a
// regular file.
int open_regular_file(const std::string& path, const std::string& kind);

// A buffered, seekable std::streambuf reading a descriptor, which it closes.
class FileInputBuffer : public std::streambuf {
 public:
  explicit FileInputBuffer(int fd) : fd_(fd) {}
  ~FileInputBuffer() override;
  FileInputBuffer(const FileInputBuffer&) = delete;
  FileInputBuffer& operator=(const FileInputBuffer&) = delete;

 protected:
  int_type underflow() override;
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode which) override;
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override;

 private:
  int fd_;
  char buffer_[1 << 16];
};

// The next line of `in` (without its '\n') into `line`; false at the end of the input with nothing
// read. Throws qgml::FileError "<kind> file '<path>': line N is longer than max_bytes" beyond the bound,
// so that a file without line breaks cannot take all memory.
bool read_bounded_line(std::streambuf& in, std::string& line, std::size_t max_bytes, long long line_number,
                       const std::string& path, const std::string& kind);

// Lines of data files are at most this long (1 MiB: some tens of thousands of coordinates).
constexpr std::size_t max_line_bytes = std::size_t(1) << 20;

}  // namespace qgml::detail
