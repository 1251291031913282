// The predictions of a supervised model for points in the data's units (docs/supervised.md, sections 1
// and 11): the features standardised as in training (SupervisedTransform), y_hat_c = <psi_0|B_c|psi_0>
// with psi_0 the ground state of H(x) = 1/2 sum_k (A_k - x_k)^2, then back to the targets' units
// (regression), the class of sigmoid(y_hat) (logistic) or of the largest softmax(y_hat)_c (softmax).
// Shared by `qgml predict`, the C interface and Python.
#pragma once

#include <string>
#include <vector>

#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"

#include "data/supervised_data.hpp"

namespace qgml::app {

struct SupervisedPrediction {
  int outputs = 1;                   // C, the model outputs per point
  std::vector<double> model_output;  // T x C: y_hat_c of each point (NaN where its eigensolve failed)
  std::vector<double> value;         // regression: T x C, the targets' units; classification: T classes
  std::vector<double> probability;   // logistic: T, P(positive class); softmax: T x K, P(class k); else empty
  long long failed = 0;              // points without a prediction
};

// operators: A_1..A_D then B_1..B_C (D + C matrices); features: T x D in the data's units. Errors name
// `source` (the matrices' file or what they came from) and say what was expected.
SupervisedPrediction predict_supervised(const SupervisedTransform& tr, const HostMatrices& operators,
                                        const HostData& features, const std::string& source);

}  // namespace qgml::app
