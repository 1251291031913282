#include "io/json_file.hpp"

#include <fstream>
#include <sstream>

#include "qgml/io/atomic_file.hpp"

namespace qgml::detail {

namespace {

// nlohmann's messages start with "[json.exception.parse_error.101] ": keep what follows.
std::string without_exception_id(const std::string& message) {
  const auto p = message.find("] ");
  return p == std::string::npos ? message : message.substr(p + 2);
}

}  // namespace

std::string json_text(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void write_json_file(const std::string& path, const Json& j) {
  write_file_atomically(path, j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

Json read_json_object(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(what + ": cannot open");
  std::stringstream buf;
  buf << in.rdbuf();
  Json j;
  try {
    j = Json::parse(buf.str());
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number beyond double (1e400)
    throw FileError(what + ": not valid JSON (" + without_exception_id(e.what()) + ")");
  }
  if (!j.is_object()) throw FileError(what + ": expected a JSON object, got " + std::string(j.type_name()));
  return j;
}

void append_fields(Json& j, const JsonFields& fields) {
  for (const auto& [key, value] : fields.fields()) {
    QGML_REQUIRE(!j.contains(key), "qgml: JSON field \"" + key + "\" is written twice");
    std::visit([&, &key = key](const auto& v) { j[key] = v; }, value);
  }
}

const Json& json_member(const Json& j, const std::string& key, const std::string& what) {
  const auto it = j.find(key);
  if (it == j.end()) throw FileError(what + ": missing field \"" + key + "\"");
  return *it;
}

std::string json_string(const Json& j, const std::string& key, const std::string& what) {
  const Json& v = json_member(j, key, what);
  if (!v.is_string()) throw FileError(what + ": field \"" + key + "\" must be a string, got " + json_text(v));
  return v.get<std::string>();
}

}  // namespace qgml::detail
