// The program's JSON output files (monitor.json, loss.json, the tune report, the Chrome trace), written
// with nlohmann-json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "qgml/io/atomic_file.hpp"

namespace qgml::app {

// Keys keep the order in which they are added.
using Json = nlohmann::ordered_json;

// Writes j atomically with a final newline, indented by `indent` spaces (-1: on one line). Non-finite
// numbers become null; text that is not UTF-8 is written with U+FFFD in place of the invalid bytes.
inline void write_json_file(const std::string& path, const Json& j, int indent = 2) {
  write_file_atomically(path, j.dump(indent, ' ', false, Json::error_handler_t::replace) + "\n");
}

}  // namespace qgml::app
