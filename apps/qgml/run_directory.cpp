#include "run_directory.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "qgml/common/error.hpp"
#include "qgml/common/random.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

void check_writable_directory(const std::string& dir) {
  const fs::path probe = fs::path(dir) / (".qgml-write-test-" + std::to_string(::getpid()));
  std::ofstream out(probe);
  if (!out) throw Error("output directory '" + dir + "' is not writable");
  out.close();
  std::error_code ec;
  fs::remove(probe, ec);
}

std::string create_run_directory(const std::string& parent, const std::string& name) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw Error("output directory '" + parent + "': cannot create: " + ec.message());
  check_writable_directory(parent);
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  const auto ticks = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  const std::uint64_t id = mix64(std::uint64_t(ticks) ^ (std::uint64_t(::getpid()) << 32));
  char hex[16];
  std::snprintf(hex, sizeof hex, "%06llx", static_cast<unsigned long long>(id & 0xffffff));
  const fs::path dir = fs::path(parent) / (name + "_" + stamp + "_" + hex);
  if (!fs::create_directory(dir, ec) || ec)
    throw Error("run directory '" + dir.string() + "': cannot create" + (ec ? ": " + ec.message() : ""));
  return dir.string();
}

}  // namespace qgml::app
