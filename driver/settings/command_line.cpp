// The command line's side of the settings: an option "--key value" or "--key=value", and the --help
// listing of every setting.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "qgml/common/error.hpp"

#include "settings/config.hpp"

namespace qgml::app {

std::pair<std::string, std::string> take_option(const std::vector<std::string>& args, std::size_t& i,
                                                const std::string& context) {
  std::string key = args[i].substr(2), value;
  const auto eq = key.find('=');
  if (eq != std::string::npos) {
    value = key.substr(eq + 1);
    key = key.substr(0, eq);
  } else {
    if (i + 1 >= args.size()) throw Error(context + "option --" + key + " needs a value");
    value = args[++i];
  }
  return {key, value};
}

std::string settings_help() {
  std::ostringstream out;
  std::string section;
  for (const auto& s : schema()) {
    const std::string sec = s.key.find('.') == std::string::npos ? "" : s.key.substr(0, s.key.find('.'));
    if (sec != section || sec.empty()) {
      out << "\n  " << (sec.empty() ? "(top level)" : sec) << ":\n";
      section = sec;
    }
    std::string def = s.default_value.empty() ? "\"\"" : s.default_value;
    out << "    --" << s.key << " " << def;
    out << std::string(s.key.size() + def.size() < 40 ? 40 - s.key.size() - def.size() : 1, ' ') << s.help;
    if (!s.choices.empty()) {
      out << " (";
      for (std::size_t i = 0; i < s.choices.size(); ++i) out << (i ? "|" : "") << s.choices[i];
      out << ")";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace qgml::app
