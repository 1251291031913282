// printf-style formatting into a std::string, for the program's messages.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace qgml::app {

inline std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

}  // namespace qgml::app
