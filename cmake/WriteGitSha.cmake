# cmake -DSOURCE_DIR=... -DOUTPUT=... -P WriteGitSha.cmake (run by the target gmb_git_sha).
# A copy of the tree without .git (e.g. shipped to a GPU machine) can name its commit through
# the environment variable GMB_GIT_SHA.
set(sha "unknown")
if(DEFINED ENV{GMB_GIT_SHA})
  set(sha "$ENV{GMB_GIT_SHA}")
else()
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD
      WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE head
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND head)
      set(sha "${head}")
      execute_process(COMMAND "${GIT_EXECUTABLE}" diff --quiet HEAD --
        WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE dirty ERROR_QUIET)
      if(NOT dirty EQUAL 0)
        string(APPEND sha "-dirty")
      endif()
    endif()
  endif()
endif()
file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT "#pragma once\n#define GMB_GIT_SHA \"${sha}\"\n")
