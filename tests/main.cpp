// Test driver: Kokkos is initialised once for the whole Catch2 session (the library never does it).
// Kokkos' start-up advice about OMP_PROC_BIND goes to stdout, where it would corrupt the test list
// that CTest reads, so warnings are switched off (--kokkos-disable-warnings, Kokkos 3.x and 4.x).
#include <Kokkos_Core.hpp>

#include <catch2/catch_session.hpp>

#include <string>
#include <vector>

int main(int argc, char* argv[]) {
  std::string quiet = "--kokkos-disable-warnings";
  std::vector<char*> args(argv, argv + argc);
  args.insert(args.begin() + (argc > 0 ? 1 : 0), quiet.data());
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  Kokkos::ScopeGuard guard(n, args.data());
  return Catch::Session().run(n, args.data());
}
