// The error of a file: it cannot be opened, read, written or renamed, or its contents are not what its
// reader expects. Callers that report by category (the C interface's QGML_ERROR_IO, Python's OSError)
// tell it from the other qgml::Error by type.
#pragma once

#include "qgml/common/error.hpp"

namespace qgml {

class FileError : public Error {
 public:
  using Error::Error;
};

}  // namespace qgml
