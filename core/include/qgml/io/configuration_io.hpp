// Saving and loading matrix configurations.
//
// Format: <stem>.npy holds the D x N x N complex array (complex128 for double, complex64 for float,
// C order, element (k, i, j) = (A_k)_ij); <stem>.json beside it holds the metadata
//   {"format": "qgml-matrix-configuration", "version": 1, "D": 3, "N": 4, "precision": "double"}.
// Both are written atomically. Loading needs the .npy; the .json, when present, must agree with it.
#pragma once

#include <string>

#include "qgml/model/initializers.hpp"
#include "qgml/plan/kernel_kinds.hpp"

namespace qgml {

// Precision: plan/kernel_kinds.hpp.

// Writes path (which must end in .npy) and the sibling .json.
void save_matrices(const std::string& path, const HostMatrices& m, Precision precision);
// Reads path (.npy) and checks it against the sibling .json if that exists. Throws qgml::FileError naming
// the file and the problem: wrong rank or dtype, non-square matrices, truncated data, metadata
// mismatch, non-finite or non-Hermitian matrices. The stored precision is reported in *precision.
HostMatrices load_matrices(const std::string& path, Precision* precision = nullptr);

template <class Real, class ExecSpace>
void save_configuration(const std::string& path, const MatrixConfiguration<Real, ExecSpace>& config,
                        const ExecSpace& exec) {
  save_matrices(path, to_host(config, exec),
                std::is_same_v<Real, float> ? Precision::single_precision : Precision::double_precision);
}

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
MatrixConfiguration<Real, ExecSpace> load_configuration(const std::string& path, const ExecSpace& exec) {
  return to_configuration<Real>(load_matrices(path), exec);
}

}  // namespace qgml
