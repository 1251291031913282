// Test driver for the data-parallel layer: every rank runs the same Catch2 session (so the collectives
// inside the tests match up); MPI is initialised before Kokkos and finalised after it.
#include <Kokkos_Core.hpp>

#include <catch2/catch_session.hpp>

#include <string>
#include <vector>

#include "qgml/mpi/communicator.hpp"

int main(int argc, char* argv[]) {
  qgml::mpi::Environment mpi(argc, argv);
  std::string quiet = "--kokkos-disable-warnings";
  std::vector<char*> args(argv, argv + argc);
  args.insert(args.begin() + (argc > 0 ? 1 : 0), quiet.data());
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  int code = 0;
  {
    Kokkos::ScopeGuard guard(n, args.data());
    code = Catch::Session().run(n, args.data());
  }
  return code;
}
