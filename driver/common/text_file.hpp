// The whole text of a file.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

#include "qgml/common/file_error.hpp"

namespace qgml::app {

// The text of the file at `path`; a FileError when it cannot be opened.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FileError("'" + path + "': cannot open");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace qgml::app
