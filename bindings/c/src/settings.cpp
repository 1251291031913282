// Settings: the program's configuration (defaults, a YAML file, overrides in order), validated by the
// program's own reader (driver/settings/config.hpp) at every call.
#include <memory>
#include <string>

#include "c_api_internal.hpp"
#include "settings/config.hpp"
#include "settings_internal.hpp"

namespace qgml::capi {

app::Config resolve(const qgml_settings& s) { return app::load_config(s.yaml_path, s.overrides); }

}  // namespace qgml::capi

using qgml::capi::guarded;
using qgml::capi::require_pointer;

extern "C" {

int qgml_settings_create(qgml_settings** out) {
  return guarded("qgml_settings_create", QGML_ERROR_RUNTIME, [&] {
    require_pointer(out, "qgml_settings_create", "out");
    *out = nullptr;
    *out = qgml::capi::hand_out(std::make_unique<qgml_settings>());
  });
}

int qgml_settings_load(qgml_settings* s, const char* yaml_path) {
  return guarded("qgml_settings_load", QGML_ERROR_INVALID_ARGUMENT, [&] {
    qgml::capi::require_handle(s, "qgml_settings_load", "settings");
    require_pointer(yaml_path, "qgml_settings_load", "yaml_path");
    qgml::capi::require(*yaml_path != '\0', "qgml_settings_load", "yaml_path is empty");
    qgml::app::load_config(yaml_path, s->overrides);  // the file's errors now, with its lines
    s->yaml_path = yaml_path;
  });
}

int qgml_settings_set(qgml_settings* s, const char* key, const char* value) {
  return guarded("qgml_settings_set", QGML_ERROR_INVALID_ARGUMENT, [&] {
    qgml::capi::require_handle(s, "qgml_settings_set", "settings");
    require_pointer(key, "qgml_settings_set", "key");
    require_pointer(value, "qgml_settings_set", "value");
    try {
      qgml::app::load_config("", {{key, value}});
    } catch (const qgml::Error& e) {
      // "command line --KEY: ..." is the program's wording; here the setting is named by itself.
      std::string m = e.what();
      const std::string prefix = std::string("command line --") + key + ": ";
      if (m.compare(0, prefix.size(), prefix) == 0) m = m.substr(prefix.size());
      throw qgml::capi::Failure{QGML_ERROR_INVALID_ARGUMENT, "qgml_settings_set: " + m};
    }
    s->overrides.emplace_back(key, value);
  });
}

int qgml_settings_get(const qgml_settings* s, const char* key, char* buf, size_t size, size_t* needed) {
  return guarded("qgml_settings_get", QGML_ERROR_INVALID_ARGUMENT, [&] {
    qgml::capi::require_handle(s, "qgml_settings_get", "settings");
    require_pointer(key, "qgml_settings_get", "key");
    const qgml::app::Config c = qgml::capi::resolve(*s);
    bool known = false;
    for (const auto& setting : qgml::app::schema()) known = known || setting.key == key;
    if (!known) {
      try {
        qgml::app::load_config("", {{key, ""}});
      } catch (const qgml::Error& e) {
        std::string m = e.what();
        const std::string prefix = std::string("command line --") + key + ": ";
        if (m.compare(0, prefix.size(), prefix) == 0) m = m.substr(prefix.size());
        throw qgml::capi::Failure{QGML_ERROR_INVALID_ARGUMENT, "qgml_settings_get: " + m};
      }
    }
    qgml::capi::copy_text(c.text(key), buf, size, needed, "qgml_settings_get");
  });
}

int qgml_settings_destroy(qgml_settings* s) {
  return guarded("qgml_settings_destroy", QGML_ERROR_INVALID_ARGUMENT, [&] {
    if (!s) return;
    qgml::capi::unregister_handle(s, qgml::capi::HandleKind::settings, "qgml_settings_destroy", "settings");
    delete s;
  });
}

}  // extern "C"
