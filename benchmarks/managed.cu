// managed family: to be written (issue 13).
#include <vector>

#include "benchmarks/families.hpp"

namespace gmb {

std::vector<bench_case> managed_cases(environment&, sweep) { return {}; }

}  // namespace gmb
