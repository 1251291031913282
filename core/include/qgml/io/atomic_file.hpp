// Output files are written to a temporary name in the target directory and renamed into place, so a
// reader never sees a half-written file and an interrupted write leaves the previous version intact.
// The temporary (<path>.tmp.<pid>[.<n>]) is a new file (O_CREAT | O_EXCL | O_NOFOLLOW): a file or link
// already at that name is never written through; the next name is tried.
#pragma once

#include <string>

namespace qgml {

// Writes size bytes to path atomically; throws qgml::FileError naming path on any failure (including a
// full disk), after removing the temporary file.
void write_file_atomically(const std::string& path, const void* data, std::size_t size);
void write_file_atomically(const std::string& path, const std::string& contents);

// Whether `name` is exactly the name of such a temporary: <path>.tmp.<pid> or <path>.tmp.<pid>.<n>,
// <path> not empty, <pid> and <n> decimal without a leading zero (pid at most 2^31 - 1). Sets `pid`.
// (The run directory's clean-up of an interrupted write's temporaries, driver/run/run_directory.hpp.)
bool is_temporary_name(const std::string& name, long& pid);

}  // namespace qgml
