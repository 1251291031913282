// qgml train --resume: the comparison of the run with its checkpoint (or config.yaml) and the record of
// the changes a resume accepted.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "qgml/parallel/communicator.hpp"
#include "qgml/train/checkpoint.hpp"

#include "run/run_fingerprint.hpp"
#include "settings/config.hpp"
#include "train/train_log.hpp"

namespace qgml::app {

// --resume-with-changes: the fingerprint keys (FingerprintChange::key, or "all") a resume may change.
using AcceptedChanges = std::vector<std::string>;

// Whether the run directory's checkpoint directory holds no checkpoint yet: no LATEST and nothing but
// an epoch-0 checkpoint being written (the run stopped before its first checkpoint was complete).
bool no_checkpoint_yet(const std::string& checkpoint_dir);

// What a resume accepted (check_resume), written to the run by record_resume once the checkpoint has
// been loaded: the checkpoint's epoch and the accepted differences, each with its description.
struct AcceptedResume {
  int epoch = 0;
  std::vector<std::pair<FingerprintChange, std::string>> changes;
};

// A collective that writes nothing. Compares the fingerprint of the checkpoint LATEST names (read and
// verified), or, where the run has no checkpoint yet (`fresh`), the settings of its config.yaml, with
// the run's: differences not in `accepted` are an error listing them; the accepted ones are returned
// for record_resume, called only after everything else has been checked (the checkpoint loaded), so
// that a change that cannot apply leaves config.yaml and changes.json as they were.
AcceptedResume check_resume(const std::string& run_dir, const std::string& checkpoint_dir, bool fresh,
                            const CheckpointFingerprint& now, const AcceptedChanges& accepted, Log& log,
                            Communicator& comm);

// A collective, after check_resume and after the checkpoint has been loaded: logs the accepted changes,
// appends them to the run's changes.json and rewrites config.yaml to the configuration that now runs.
void record_resume(const Config& c, const std::string& run_dir, const AcceptedResume& resume, Log& log,
                   Communicator& comm);

}  // namespace qgml::app
