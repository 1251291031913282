// printf-style formatting into a std::string, for the program's messages.
#pragma once

#include <cmath>
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

// A byte count for people: "512 B", "1.5 MiB", "2.0 GiB" (powers of 1024).
inline std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (std::abs(b) >= 1024 && u < 5) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? format("%.0f B", b) : format("%.1f %s", b, units[u]);
}

}  // namespace qgml::app
