// JSON files of the library (matrix metadata, checkpoint state, history, dimension summary), read and
// written with nlohmann-json. Private to the library's sources: no public header includes it.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "qgml/common/file_error.hpp"
#include "qgml/io/json_fields.hpp"

namespace qgml::detail {

// Keys keep the order in which they are added.
using Json = nlohmann::ordered_json;

// Writes j with two-space indentation and a final newline, atomically. Non-finite numbers become null;
// text that is not UTF-8 is written with U+FFFD in place of the invalid bytes.
void write_json_file(const std::string& path, const Json& j);

// Parses the file at path as one JSON object. `what` names the file in errors, e.g. "checkpoint 'x'";
// a missing file, a file that is not JSON (or is cut short) and a value other than an object all throw
// qgml::Error.
Json read_json_object(const std::string& path, const std::string& what);

// j on one line, as it appears in error messages.
std::string json_text(const Json& j);

// Appends the fields to the object j; a key j already has is an error.
void append_fields(Json& j, const JsonFields& fields);

// The member `key` of the object j; throws "<what>: missing field \"key\"".
const Json& json_member(const Json& j, const std::string& key, const std::string& what);

// The text of j[key]; throws naming the field when it is missing or not a string.
std::string json_string(const Json& j, const std::string& key, const std::string& what);

// j[key] as an integer in [lo, hi]; throws naming the field, the range and the value found otherwise.
template <class Int>
Int json_integer(const Json& j, const std::string& key, const std::string& what,
                 Int lo = std::numeric_limits<Int>::min(), Int hi = std::numeric_limits<Int>::max()) {
  static_assert(std::is_integral_v<Int> && sizeof(Int) <= 8);
  const Json& v = json_member(j, key, what);
  // u >= lo for a non-negative u, without comparing an unsigned Int with zero.
  const auto at_least_lo = [lo](std::uint64_t u) {
    if constexpr (std::is_signed_v<Int>)
      return lo <= 0 || u >= std::uint64_t(lo);
    else
      return u >= std::uint64_t(lo);
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (at_least_lo(u) && u <= std::uint64_t(hi)) return Int(u);
  } else if (v.is_number_integer()) {
    const auto s = v.get<std::int64_t>();
    bool in_range = false;
    if (s >= 0)
      in_range = at_least_lo(std::uint64_t(s)) && std::uint64_t(s) <= std::uint64_t(hi);
    else if constexpr (std::is_signed_v<Int>)
      in_range = s >= std::int64_t(lo);
    if (in_range) return Int(s);
  }
  throw FileError(what + ": field \"" + key + "\" must be an integer in [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "], got " + json_text(v));
}

}  // namespace qgml::detail
