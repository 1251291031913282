// libFuzzer target: the program's settings file (YAML text) through qgml::app::load_config, then every
// setting read back through its typed accessor (an accepted value must read without error).
#include "fuzz_common.hpp"
#include "settings/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = qgml::fuzz::write_file(qgml::fuzz::scratch() / "config.yaml", data, size);
  bool loaded = false;
  qgml::app::Config config;
  qgml::fuzz::expect_value_or_error([&] {
    config = qgml::app::load_config(path, {});
    loaded = true;
  });
  if (!loaded) return 0;
  for (const auto& s : qgml::app::schema()) {
    if (config.is_auto(s.key)) continue;
    switch (s.type) {
      case qgml::app::SettingType::integer: {
        const long v = config.integer(s.key);
        QGML_FUZZ_CHECK(double(v) >= s.min && double(v) <= s.max);  // never accepted outside its range
        break;
      }
      case qgml::app::SettingType::real: {
        const double v = config.real(s.key);
        QGML_FUZZ_CHECK(v >= s.min && v <= s.max);
        break;
      }
      case qgml::app::SettingType::boolean:
        (void)config.boolean(s.key);
        break;
      default:
        (void)config.text(s.key);
    }
  }
  (void)config.to_yaml();
  return 0;
}
