#pragma once
// The built binaries as the tests run them: a command's exit code and output, and the binary of
// each flavor (paths from CMake: GMB_BINARY_DEFAULT, GMB_BINARY_CA, GMB_BINARY_CG).
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace gmb::test {

struct result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

inline result run(const std::string& command) {
  result r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe)) r.output += buffer;
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline const char* binary_of(const std::string& flavor) {
  return flavor == "ca" ? GMB_BINARY_CA : flavor == "cg" ? GMB_BINARY_CG : GMB_BINARY_DEFAULT;
}

}  // namespace gmb::test
