// Host-side error reporting: every failure names where it happened and what was expected.
#pragma once

#include <stdexcept>
#include <string>

namespace qgml {

// Thrown for invalid arguments, malformed files and failed backend calls.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_error(const std::string& message, const char* file, int line);

}  // namespace qgml

// QGML_REQUIRE(condition, message): throws qgml::Error with the source location when condition fails.
#define QGML_REQUIRE(condition, message)                                  \
  do {                                                                    \
    if (!(condition)) ::qgml::throw_error((message), __FILE__, __LINE__); \
  } while (false)
