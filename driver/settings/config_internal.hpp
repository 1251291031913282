// The helpers that the files of the configuration library share (private to driver/settings).
#pragma once

#include <string>

#include "settings/config.hpp"

namespace qgml::app::config_detail {

// The setting of the schema with this key, or nullptr.
const Setting* find_setting(const std::string& key);
// A boolean setting's value: true, yes, on, 1 or false, no, off, 0; false when v is none of them.
bool parse_bool(const std::string& v, bool& out);
// The message for a key that is not in the schema, with the closest known key when one is close.
std::string unknown_setting(const std::string& key);
// Sets key to value in c after checking both; throws qgml::Error starting with `where` when either is wrong.
void apply(Config& c, const std::string& key, const std::string& value, const std::string& where);

}  // namespace qgml::app::config_detail
