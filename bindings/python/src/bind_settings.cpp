// The bindings of the class Settings: the program's settings, loaded, set and read.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <string>

#include "qgml/c_api.h"

#include "bindings.hpp"
#include "c_calls.hpp"
#include "handles.hpp"

using namespace nb::literals;

namespace qgml_python {

void bind_settings(nb::module_& mod) {
  nb::class_<Settings>(mod, "Settings", "The program's settings (qgml --help): defaults, a YAML file, overrides.")
      .def(nb::init<>())
      .def(
          "load", [](Settings& s, const std::string& path) { check(qgml_settings_load(s.get(), path.c_str())); },
          "path"_a, "Reads a YAML config file as `qgml train FILE.yaml` does.")
      .def(
          "set",
          [](Settings& s, const std::string& key, const std::string& value) {
            check(qgml_settings_set(s.get(), key.c_str(), value.c_str()));
          },
          "key"_a, "value"_a, "Sets one setting (validated at once).")
      .def(
          "get",
          [](const Settings& s, const std::string& key) {
            return text([&](char* buf, size_t size, size_t* needed) {
              return qgml_settings_get(s.get(), key.c_str(), buf, size, needed);
            });
          },
          "key"_a, "The resolved value of a setting, as text.");
}

}  // namespace qgml_python
