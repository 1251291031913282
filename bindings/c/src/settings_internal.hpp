// The resolved configuration of a settings handle (defaults, its YAML file, its overrides).
#pragma once

#include "c_api_internal.hpp"
#include "settings/config.hpp"

namespace qgml::capi {
app::Config resolve(const qgml_settings& s);
}
