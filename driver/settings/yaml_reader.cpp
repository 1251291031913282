// The YAML reader: load_config, the defaults, then the settings of a YAML file (one document, each key
// once), then the command-line overrides.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "qgml/common/file_error.hpp"

#include "settings/config.hpp"
#include "settings/config_internal.hpp"

namespace qgml::app {

namespace {

using config_detail::apply;
using config_detail::find_setting;

// Each section and each setting once: a key given twice in one file is an error naming both lines
// (YAML leaves duplicate keys to the application; a silent "last one wins" hides typos).
void read_sections(Config& c, const YAML::Node& root, const std::string& path) {
  std::map<std::string, int> seen;  // section or setting -> line
  const auto once = [&](const std::string& key, int line, const char* what) {
    const auto [it, inserted] = seen.emplace(key, line);
    if (!inserted)
      throw Error(path + ":" + std::to_string(line) + ": duplicate " + what + " '" + key + "' (first on line " +
                  std::to_string(it->second) + ")");
  };
  for (const auto& section : root) {
    const std::string name = section.first.as<std::string>();
    const int line = section.first.Mark().line + 1;
    const std::string where = path + ":" + std::to_string(line);
    once(name, line, "section");
    const Setting* top = find_setting(name);
    if (top && name.find('.') == std::string::npos) {  // a top-level setting: `task: regression`
      if (!section.second.IsScalar())
        throw Error(where + ": " + name + ": expected a single value, got a " +
                    (section.second.IsSequence() ? "list" : "mapping"));
      apply(c, name, section.second.as<std::string>(), where);
      continue;
    }
    if (!section.second.IsMap()) {
      if (section.second.IsNull()) continue;
      throw Error(where + ": section '" + name + "' must be a mapping of settings");
    }
    for (const auto& item : section.second) {
      const std::string key = name + "." + item.first.as<std::string>();
      const int item_line = item.first.Mark().line + 1;
      const std::string at = path + ":" + std::to_string(item_line);
      once(key, item_line, "setting");
      if (!item.second.IsScalar() && !item.second.IsNull())
        throw Error(at + ": " + key + ": expected a single value, got a " +
                    (item.second.IsSequence() ? "list" : "mapping"));
      apply(c, key, item.second.IsNull() ? "" : item.second.as<std::string>(), at);
    }
  }
}

// The line (1-based) of the second "---" document marker that follows content, or 0.
int second_document_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int number = 0, markers = 0;
  bool content = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("---", 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r')) {
      if (content || ++markers > 1) return number;
      continue;
    }
    const auto first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#' && line.rfind("%", 0) != 0) content = true;
  }
  return 0;
}

// The documents of a YAML text, at most two (a config file holds one). yaml-cpp's LoadAll loops forever,
// allocating a null document per turn, when its parser stops at a token it cannot place (a stray ',' or '}'
// after the top-level node, e.g. "{a: 1}, b"): HandleNextDocument then reports a new document without
// consuming the token (yaml-cpp 0.7 and 0.8, jbeder/yaml-cpp#1319). Counting the documents with the event
// parser and stopping at the second keeps the reading bounded; the first is then built by YAML::Load.
struct YamlDocuments {
  YAML::Node first;
  int count = 0;            // 0, 1 or 2 (two or more)
  YAML::Mark second_start;  // where the second document starts, when count == 2
};

class DocumentCounter : public YAML::EventHandler {
 public:
  int count = 0;
  YAML::Mark second_start;
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++count == 2) second_start = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

YamlDocuments load_documents(const std::string& text) {
  YamlDocuments d;
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentCounter counter;
  while (counter.count < 2 && parser.HandleNextDocument(counter)) {
  }
  d.count = counter.count;
  d.second_start = counter.second_start;
  if (d.count >= 1) d.first = YAML::Load(text);
  return d;
}

}  // namespace

Config load_config(const std::string& path, const std::vector<std::pair<std::string, std::string>>& overrides) {
  Config c;
  for (const auto& s : schema()) c.set(s.key, s.default_value, "default");
  if (!path.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw FileError("config '" + path + "': is a directory, expected a file");
    std::ifstream file(path, std::ios::binary);
    if (!file) throw FileError("config '" + path + "': cannot open");
    std::ostringstream text;
    text << file.rdbuf();
    YamlDocuments documents;
    try {
      documents = load_documents(text.str());
    } catch (const YAML::Exception& e) {
      throw FileError("config '" + path + "': line " + std::to_string(e.mark.line + 1) + ", column " +
                      std::to_string(e.mark.column + 1) + ": not valid YAML (" + e.msg + ")");
    }
    if (documents.count > 1) {
      const int line = second_document_line(path);
      if (line == 0)  // no '---' after content: text the parser could not place after the first node
        throw FileError("config '" + path + "': line " + std::to_string(documents.second_start.line + 1) + ", column " +
                        std::to_string(documents.second_start.column + 1) +
                        ": not valid YAML (unexpected text after the end of the document)");
      throw FileError(
          path + ":" + std::to_string(line) +
          ": a second YAML document; a config file holds one (remove the '---' and what follows, or merge it)");
    }
    const YAML::Node root = documents.count == 0 ? YAML::Node() : documents.first;
    if (!root.IsNull() && !root.IsMap())
      throw Error(
          "config '" + path +
          "': expected sections (data, model, training, mpi, analysis, output, profiling) and the top-level task");
    try {
      read_sections(c, root, path);
    } catch (const YAML::Exception& e) {  // e.g. a key that is itself a list
      throw Error("config '" + path + "': line " + std::to_string(e.mark.line + 1) + ": unexpected structure (" +
                  e.msg + ")");
    }
  }
  for (const auto& [key, value] : overrides) apply(c, key, value, "command line --" + key);
  return c;
}

}  // namespace qgml::app
