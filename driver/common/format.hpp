// printf-style formatting into a std::string, for the program's messages.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace qgml::app {

inline std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* fmt, ...) {
  // Any length: a long path or message is not cut at a fixed buffer.
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  const int size = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string out(size > 0 ? std::size_t(size) : 0, '\0');
  if (size > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, again);
  va_end(again);
  return out;
}

}  // namespace qgml::app
