// Config: the values of the settings, where each came from, and their YAML dump.
#include "settings/config.hpp"

#include <sstream>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/io/parse_number.hpp"

#include "settings/config_internal.hpp"

namespace qgml::app {

namespace {
using T = SettingType;
using config_detail::find_setting;
using config_detail::parse_bool;

const std::string& concrete(const Config& c, const std::string& key) {
  const std::string& v = c.text(key);
  if (v == "auto" && find_setting(key) && find_setting(key)->allows_auto)
    throw Error("internal: setting '" + key + "' is still 'auto' (the program must choose it first)");
  return v;
}
}  // namespace

// Read with the parsers that validated them (check()); a value the program set itself is read the
// same way.
long Config::integer(const std::string& key) const {
  const std::string& v = concrete(*this, key);
  long long n = 0;
  if (!parse_integer(v, n)) throw Error("internal: setting " + key + " = '" + v + "' is not an integer");
  return long(n);
}
double Config::real(const std::string& key) const {
  const std::string& v = concrete(*this, key);
  double x = 0;
  if (!parse_real(v, x)) throw Error("internal: setting " + key + " = '" + v + "' is not a number");
  return x;
}
bool Config::is_auto(const std::string& key) const {
  const Setting* s = find_setting(key);
  return s && s->allows_auto && text(key) == "auto";
}
const std::string& Config::text(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw Error("internal: setting '" + key + "' is not in the schema");
  return it->second;
}
bool Config::boolean(const std::string& key) const {
  bool b = false;
  parse_bool(concrete(*this, key), b);
  return b;
}
const std::string& Config::origin(const std::string& key) const { return origins_.at(key); }
void Config::set(const std::string& key, const std::string& value, const std::string& origin) {
  values_[key] = value;
  origins_[key] = origin;
}

std::string Config::to_yaml() const {
  std::ostringstream out;
  std::string section;
  for (const auto& s : schema()) {
    const bool top = s.key.find('.') == std::string::npos;  // a top-level setting (task)
    const std::string sec = top ? "" : s.key.substr(0, s.key.find('.'));
    if (sec != section && !top) {
      out << sec << ":\n";
      section = sec;
    }
    const std::string& v = text(s.key);
    const bool quote = s.type == T::text;
    out << (top ? "" : "  ") << (top ? s.key : s.key.substr(sec.size() + 1)) << ": " << (quote ? "\"" + v + "\"" : v)
        << "  # " << origin(s.key) << "\n";
  }
  return out.str();
}

}  // namespace qgml::app
