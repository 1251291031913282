// The predictions of a supervised model for points in the data's units (docs/supervised.md, section 1):
// the features standardised as in training (SupervisedTransform), y_hat = <psi_0|B|psi_0> with psi_0 the
// ground state of H(x) = 1/2 sum_k (A_k - x_k)^2, then back to the targets' units (regression) or the
// class of sigmoid(y_hat) (classification). Shared by `qgml predict`, the C interface and Python.
#pragma once

#include <string>
#include <vector>

#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"

#include "supervised_data.hpp"

namespace qgml::app {

struct SupervisedPrediction {
  std::vector<double> model_output;  // y_hat of each point (NaN where its eigensolve failed)
  std::vector<double> value;         // regression: y_hat in the targets' units; classification: the class
  std::vector<double> probability;   // classification: P(positive class) = sigmoid(y_hat); empty otherwise
  long long failed = 0;              // points without a prediction
};

// operators: A_1..A_D then B (D + 1 matrices); features: T x D in the data's units. Errors name `source`
// (the matrices' file or what they came from) and say what was expected.
SupervisedPrediction predict_supervised(const SupervisedTransform& tr, const HostMatrices& operators,
                                        const HostData& features, const std::string& source);

}  // namespace qgml::app
