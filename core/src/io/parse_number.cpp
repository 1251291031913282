#include "qgml/io/parse_number.hpp"

#include <cfloat>
#include <charconv>
#include <cmath>
#include <system_error>

namespace qgml {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Removes a leading '+' that precedes a digit or a point (std::from_chars takes '-' only).
std::string_view drop_plus(std::string_view s) {
  if (s.size() > 1 && s[0] == '+' && (is_digit(s[1]) || s[1] == '.')) s.remove_prefix(1);
  return s;
}

}  // namespace

bool parse_integer(std::string_view text, long long& value) {
  const std::string_view s = drop_plus(text);
  if (s.empty() || !(is_digit(s[0]) || (s[0] == '-' && s.size() > 1 && is_digit(s[1])))) return false;
  long long v = 0;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v, 10);
  if (r.ec != std::errc() || r.ptr != end) return false;
  value = v;
  return true;
}

bool parse_real(std::string_view text, double& value) {
  const std::string_view s = drop_plus(text);
  // The grammar above, checked before from_chars (which also reads inf, nan and "nan(...)").
  std::size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0, digits = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) ++digits;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && is_digit(s[i]); ++i) ++digits;
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exponent_digits = 0;
    for (; i < s.size() && is_digit(s[i]); ++i) ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  if (i != s.size()) return false;
  double v = 0;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v, std::chars_format::general);
  if (r.ec != std::errc() || r.ptr != end || !std::isfinite(v)) return false;
  if (v != 0 && std::fabs(v) < DBL_MIN) return false;  // subnormal: precision lost
  value = v;
  return true;
}

}  // namespace qgml
