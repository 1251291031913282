// The groups of bindings of the module qgml._qgml, each registering its functions and classes in mod;
// qgml_module.cpp calls them in this order.
#pragma once

#include <nanobind/nanobind.h>

namespace qgml_python {

// version, initialize, finalize.
void bind_session(nanobind::module_& mod);
// The class Settings.
void bind_settings(nanobind::module_& mod);
// The class Model.
void bind_model(nanobind::module_& mod);
// The class Run.
void bind_run(nanobind::module_& mod);
// train and resume.
void bind_training(nanobind::module_& mod);
// evaluate, quantum_metric, dimension, predict, sample and sample_resume.
void bind_analysis(nanobind::module_& mod);

}  // namespace qgml_python
