// The validation of a setting's value (type, range, choices) and its assignment to a Config.
#include <algorithm>
#include <sstream>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/io/parse_number.hpp"

#include "settings/config.hpp"
#include "settings/config_internal.hpp"

namespace qgml::app {

namespace {

using T = SettingType;
using config_detail::find_setting;
using config_detail::parse_bool;
using config_detail::unknown_setting;

std::string range_problem(const Setting& s, double v) {
  if (v >= s.min && v <= s.max) return "";
  std::ostringstream r;
  r << "out of range: must be in [" << s.min << ", " << s.max << "]";
  return r.str();
}

// Checks value against the setting with the parser that reads it; returns an empty string or what is
// wrong. Integers: an optional sign and decimal digits only ("2e2", "0x3", "1.5" and "3 " are not
// integers). Reals: decimal numbers; inf and nan are accepted by no setting.
std::string check(const Setting& s, const std::string& value) {
  if (s.allows_auto && value == "auto") return "";
  if (s.type == T::integer) {
    long long v = 0;
    if (!parse_integer(value, v))
      return "expected an integer (an optional sign and decimal digits, nothing else)" +
             std::string(s.allows_auto ? " or auto" : "");
    return range_problem(s, double(v));
  }
  if (s.type == T::real) {
    double v = 0;
    if (!parse_real(value, v))
      return "expected a number (decimal, finite, e.g. 0.5 or 1e-3)" + std::string(s.allows_auto ? " or auto" : "");
    return range_problem(s, v);
  }
  if (s.type == T::boolean) {
    bool b;
    if (!parse_bool(value, b)) return std::string("expected true or false") + (s.allows_auto ? " or auto" : "");
  } else if (!s.choices.empty() && std::find(s.choices.begin(), s.choices.end(), value) == s.choices.end()) {
    std::string all;
    for (const auto& c : s.choices) all += (all.empty() ? "" : ", ") + c;
    return "expected one of " + all;
  }
  return "";
}

}  // namespace

namespace config_detail {

bool parse_bool(const std::string& v, bool& out) {
  if (v == "true" || v == "yes" || v == "on" || v == "1") return out = true, true;
  if (v == "false" || v == "no" || v == "off" || v == "0") return out = false, true;
  return false;
}

void apply(Config& c, const std::string& key, const std::string& value, const std::string& where) {
  const Setting* s = find_setting(key);
  if (!s) throw Error(where + ": " + unknown_setting(key));
  const std::string problem = check(*s, value);
  if (!problem.empty()) throw Error(where + ": " + key + " = '" + value + "': " + problem);
  c.set(key, value, where);
}

}  // namespace config_detail

std::string setting_problem(const std::string& key, const std::string& value) {
  const Setting* s = find_setting(key);
  if (!s) throw Error("internal: setting '" + key + "' is not in the schema");
  return check(*s, value);
}

}  // namespace qgml::app
