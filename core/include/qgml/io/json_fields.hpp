// Extra fields for a JSON object that qgml writes (for example the metric and the failed points of
// dimension_summary.json): keys in the order they are added, each value a string, an integer, a real
// number or a boolean. A plain container, so that the public headers need no JSON library.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace qgml {

class JsonFields {
 public:
  using Value = std::variant<std::string, std::int64_t, double, bool>;

  JsonFields& add(const std::string& key, std::string value) { return put(key, Value(std::move(value))); }
  JsonFields& add(const std::string& key, const char* value) { return put(key, Value(std::string(value))); }
  JsonFields& add(const std::string& key, double value) { return put(key, Value(value)); }
  JsonFields& add(const std::string& key, bool value) { return put(key, Value(value)); }
  template <class Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  JsonFields& add(const std::string& key, Int value) {
    return put(key, Value(std::in_place_type<std::int64_t>, static_cast<std::int64_t>(value)));
  }

  const std::vector<std::pair<std::string, Value>>& fields() const { return fields_; }
  bool empty() const { return fields_.empty(); }

 private:
  JsonFields& put(const std::string& key, Value v) {
    fields_.emplace_back(key, std::move(v));
    return *this;
  }
  std::vector<std::pair<std::string, Value>> fields_;
};

}  // namespace qgml
