// The run's config.yaml (config_yaml, driver/run/run_directory.hpp): what the program writes, its own
// parser reads back exactly, whatever the strings hold.
#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "run/run_directory.hpp"
#include "settings/config.hpp"

namespace {

using qgml::app::Config;

Config read_back(const std::string& yaml) {
  // One file per process and call: CTest runs the cases of this file as concurrent processes.
  static int calls = 0;
  const auto path = std::filesystem::temp_directory_path() /
                    ("qgml_test_run_config_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) + ".yaml");
  {
    std::ofstream out(path, std::ios::binary);
    out << yaml;
  }
  Config c = qgml::app::load_config(path.string(), {});
  std::filesystem::remove(path);
  return c;
}

}  // namespace

TEST_CASE("run config: strings with YAML syntax round-trip through config.yaml", "[app][run-config]") {
  const std::vector<std::string> nasty{"C:\\data\\x.csv",
                                       "a \"quoted\" name",
                                       "key: value",
                                       "x # not a comment",
                                       "  leading spaces",
                                       "trailing space ",
                                       "- a list?",
                                       "[1, 2]",
                                       "{a: b}",
                                       "&anchor",
                                       "*alias",
                                       "!tag",
                                       "%directive",
                                       "@at",
                                       "`tick",
                                       "'single'",
                                       "yes",
                                       "null",
                                       "~",
                                       "0x1F",
                                       "1e3",
                                       "-",
                                       "?",
                                       "|",
                                       ">",
                                       "tab\there",
                                       "new\nline",
                                       "back\\slash\"quote",
                                       "\xc3\xa9t\xc3\xa9",
                                       "\\x41",
                                       "#",
                                       ":"};
  for (const std::string& s : nasty) {
    INFO("value: " << s);
    Config c = qgml::app::load_config("", {});
    c.set("data.file", s, "command line # with: yaml\nsyntax");
    c.set("output.name", s, "command line");
    const Config back = read_back(qgml::app::config_yaml(c));
    CHECK(back.text("data.file") == s);
    CHECK(back.text("output.name") == s);
  }
}

TEST_CASE("run config: every setting reads back as written", "[app][run-config]") {
  const Config c = qgml::app::load_config("", {{"training.lr", "0.0125"}, {"model.N", "7"}, {"training.epochs", "12"}});
  const Config back = read_back(qgml::app::config_yaml(c));
  for (const qgml::app::Setting& s : qgml::app::schema()) {
    INFO("setting: " << s.key);
    CHECK(back.text(s.key) == c.text(s.key));
  }
}
