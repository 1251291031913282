// qgml estimate as a function (estimate_from_files): the dimension analysis (docs/dimension.md) of the
// points of a data file under a trained matrix configuration read from a file, written into an output
// directory as per_point.csv and dimension_summary.json (analysis/analysis.hpp). With MPI each rank reads
// its shard of the points and analyses it; rank 0 writes. The front end parses its options into the
// request and prints the report.
#pragma once

#include <string>

#include "qgml/geometry/analyze_dimension.hpp"

namespace qgml::app {

struct EstimateRequest {
  std::string matrices;  // the configuration: configuration.npy or a run directory's matrices file
  std::string data;      // the points (CSV or NPY), D coordinates each
  std::string out;       // the output directory (created)
  GeometrySettings geometry;
  int chunk = 0;  // points per analysis chunk (analysis.chunk)
  bool single_precision = false;
};

struct EstimateReport {
  DimensionAnalysis analysis;  // every rank holds the summary of all points
  int d = 0, n = 0;            // the configuration's D and N
  bool writer = false;         // this rank wrote the outputs (rank 0)
};

// Errors (qgml::Error, FileError), on every rank alike, before anything is written: a D of the data other
// than the configuration's, fewer points than ranks, no point with a finite ground state (data and
// matrices of too different or extreme scales for the precision), an analysis that does not fit the
// memory budget or the team scratch; after the analysis, no point with a finite estimate.
EstimateReport estimate_from_files(const EstimateRequest& request);

}  // namespace qgml::app
