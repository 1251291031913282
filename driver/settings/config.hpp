// The qgml program's configuration: every setting, its type, default and meaning in one table
// (schema()), read from a YAML file and overridden on the command line with --section.key value.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace qgml::app {

enum class SettingType { integer, real, text, boolean };

struct Setting {
  std::string key;  // "section.name"
  SettingType type;
  std::string default_value;
  std::string help;
  std::vector<std::string> choices;  // for text settings with a fixed set of values
  double min = -1e300, max = 1e300;  // for numbers
  // The value "auto" is accepted too: the program chooses the value from the data and records its
  // choice (Config::set with an origin that starts "automatic").
  bool allows_auto = false;
};

// All settings, with their defaults: the one place where defaults are defined.
const std::vector<Setting>& schema();
// The command-line option at args[i], which starts with "--": {"key", "value"} from "--key=value" or
// "--key value" (then i is advanced past the value). A missing value is an error starting `context`.
std::pair<std::string, std::string> take_option(const std::vector<std::string>& args, std::size_t& i,
                                                const std::string& context = "");

// What is wrong with value for the setting key (type, range, choices), or "" when it is valid. Values
// are parsed strictly, by the same parsers that read them (qgml/io/parse_number.hpp): an integer
// setting takes an optional sign and decimal digits only ("2e2", "0x3", "1.5" and "3 " are refused), a
// real setting a finite decimal number (inf and nan are accepted by no setting).
std::string setting_problem(const std::string& key, const std::string& value);

// The default value of a setting (as written in the schema); throws for an unknown key.
const std::string& schema_default(const std::string& key);
// The --help text listing every setting.
std::string settings_help();

class Config {
 public:
  long integer(const std::string& key) const;
  double real(const std::string& key) const;
  const std::string& text(const std::string& key) const;
  bool boolean(const std::string& key) const;
  // Whether the value is "auto" (settings with allows_auto); integer/real/boolean of it throw.
  bool is_auto(const std::string& key) const;
  // Where the value came from: "default", "<file>:<line>" or "command line".
  const std::string& origin(const std::string& key) const;
  // The resolved configuration as YAML (every setting, with its origin as a comment).
  std::string to_yaml() const;

  void set(const std::string& key, const std::string& value, const std::string& origin);

 private:
  std::map<std::string, std::string> values_, origins_;
};

// Defaults, then the YAML file (if path is not empty), then the overrides. Throws qgml::Error naming
// the file and line or the option, and what was expected: unknown keys (with the closest known key
// when one is close), values of the wrong type, out of range or not among the choices, a key given
// twice in the file, a second YAML document.
Config load_config(const std::string& path, const std::vector<std::pair<std::string, std::string>>& overrides);

}  // namespace qgml::app
