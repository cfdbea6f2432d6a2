// host family: to be written (issue 13).
#include <vector>

#include "benchmarks/families.hpp"

namespace gmb {

std::vector<bench_case> host_cases(environment&, sweep) { return {}; }

}  // namespace gmb
