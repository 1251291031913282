// The message for an unknown setting key, with the known key it most likely meant (edit distance and
// common aliases).
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "settings/config.hpp"
#include "settings/config_internal.hpp"

namespace qgml::app {

namespace {

// The Levenshtein distance of a and b where it is at most `cap`, else cap + 1: the minimum of a row of
// the distance table never decreases, so the rows stop once it exceeds cap.
std::size_t edit_distance(const std::string& a, const std::string& b, std::size_t cap) {
  const std::size_t apart = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (apart > cap) return cap + 1;
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    std::size_t row_min = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t d = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      if (prev[j] + 1 < d) d = prev[j] + 1;
      if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
      cur[j] = d;
      if (d < row_min) row_min = d;
    }
    if (row_min > cap) return cap + 1;
    std::swap(prev, cur);
  }
  return prev[b.size()] > cap ? cap + 1 : prev[b.size()];
}

std::string lower(std::string s) {
  for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The known setting a mistyped key most likely meant, or "" when none is close. A key is compared
// with every setting both whole ("training.learnin_rate" with "training.lr") and by its last component
// ("learnin_rate" with "lr", one more edit when the sections differ), and with common aliases
// ("learning_rate" for lr); case is ignored. Close: at most max(1, length / 3) edits of the component.
std::string closest_key(const std::string& key) {
  static const std::vector<std::pair<std::string, std::string>> aliases{
      {"learning_rate", "training.lr"}, {"batch", "training.batch_size"},     {"num_epochs", "training.epochs"},
      {"n_epochs", "training.epochs"},  {"hilbert_dim", "model.N"},           {"weight", "training.w"},
      {"quantum_weight", "training.w"}, {"dir", "output.directory"},          {"path", "data.file"},
      {"seed_data", "data.seed"},       {"precision_mode", "model.precision"}};
  const std::string k = lower(key);
  const auto dot = k.rfind('.');
  const std::string section = dot == std::string::npos ? "" : k.substr(0, dot);
  const std::string name = dot == std::string::npos ? k : k.substr(dot + 1);
  const std::size_t close = std::max<std::size_t>(1, name.size() / 3);
  std::string best;
  std::size_t best_d = ~std::size_t(0);
  // Only a distance at most `close` and below best_d can change the answer: the distances are computed
  // up to that cap (keys of kilobytes stay cheap).
  const auto consider = [&](const std::string& alias_name, const std::string& target) {
    if (best_d == 0) return;
    const std::size_t cap = std::min(close, best_d - 1);
    const std::string t = lower(target);
    const auto t_dot = t.find('.');
    const std::string t_section = t.substr(0, t_dot);
    const std::size_t penalty = section.empty() || section == t_section ? 0 : 1;
    const std::size_t by_name = penalty > cap ? cap + 1 : edit_distance(name, alias_name, cap - penalty) + penalty;
    const std::size_t d = std::min(edit_distance(k, t, cap), by_name);
    if (d <= cap) {
      best_d = d;
      best = target;
    }
  };
  for (const auto& s : schema()) consider(lower(s.key.substr(s.key.find('.') + 1)), s.key);
  for (const auto& [alias, target] : aliases) consider(alias, target);
  return best;
}

}  // namespace

namespace config_detail {

std::string unknown_setting(const std::string& key) {
  const std::string guess = closest_key(key);
  return "unknown setting '" + key + "' (" +
         (guess.empty() ? std::string("qgml --help lists the settings") : "did you mean '" + guess + "'?") + ")";
}

}  // namespace config_detail

}  // namespace qgml::app
