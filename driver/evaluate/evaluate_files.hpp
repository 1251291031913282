// qgml eval as a function (evaluate_files): the loss, its terms and its exact gradient (docs/math.md 2-4)
// of a matrix configuration read from a file on the points of a data file, written into an output
// directory: loss.json, gradient.npy (D x N x N, complex128), xbar.npy (T x D), sigma2.npy, energy.npy (T)
// and per_point.csv, all in double whatever the precision, for cross-checks. The front end parses its
// options into the request and prints the report.
#pragma once

#include <string>

#include "qgml/train/loss_settings.hpp"

namespace qgml::app {

struct EvaluationRequest {
  std::string matrices, data;  // the configuration and the points (D coordinates each)
  std::string out;             // the output directory (created)
  LossSettings loss;
  bool single_precision = false;
};

struct EvaluationReport {
  double loss = 0, reconstruction = 0, fluctuation = 0, penalty = 0;
  int points = 0;
};

// Errors (qgml::Error, FileError): a D of the data other than the configuration's, an unreadable file, a
// loss that is not finite (the eigensolve failed at some points).
EvaluationReport evaluate_files(const EvaluationRequest& request);

}  // namespace qgml::app
