// The handles of the C interface's objects (Settings, Model, Run): every live one is registered so
// that finalize() can destroy them before Kokkos ends.
#pragma once

#include <set>

#include "qgml/c_api.h"

#include "c_calls.hpp"

namespace qgml_python {

struct Handle {
  Handle() { registry().insert(this); }
  virtual ~Handle() { registry().erase(this); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  virtual void release() = 0;
  static std::set<Handle*>& registry() {
    static std::set<Handle*> handles;
    return handles;
  }
};

[[noreturn]] void raise_released(const char* what);

struct Settings final : Handle {
  qgml_settings* h = nullptr;
  Settings() { check(qgml_settings_create(&h)); }
  ~Settings() override { release(); }
  void release() override {
    if (h) qgml_settings_destroy(h);
    h = nullptr;
  }
  qgml_settings* get() const {
    if (!h) raise_released("Settings");
    return h;
  }
};

struct Model final : Handle {
  qgml_model* h = nullptr;
  explicit Model(qgml_model* m) : h(m) {}
  ~Model() override { release(); }
  void release() override {
    if (h) qgml_model_destroy(h);
    h = nullptr;
  }
  qgml_model* get() const {
    if (!h) raise_released("Model");
    return h;
  }
};

struct Run final : Handle {
  qgml_run* h = nullptr;
  explicit Run(qgml_run* r) : h(r) {}
  ~Run() override { release(); }
  void release() override {
    if (h) qgml_run_destroy(h);
    h = nullptr;
  }
  qgml_run* get() const {
    if (!h) raise_released("Run");
    return h;
  }
};

}  // namespace qgml_python
