#include "qgml/parallel/communicator.hpp"

#include <cstdlib>
#include <exception>

namespace qgml {

void SelfCommunicator::abort(int code) { std::exit(code); }

void run_collectively(Communicator& comm, const std::function<void()>& step) {
  if (comm.size() == 1) {
    step();
    return;
  }
  std::string local;
  try {
    step();
  } catch (const std::exception& e) {
    local = e.what();
    if (local.empty()) local = "unknown error";
  }
  const std::string agreed = comm.agree_on_error(local);
  if (!agreed.empty()) throw CollectiveError(agreed);
}

}  // namespace qgml
