# Writes generated/gmb/git_sha.hpp; re-run on every commit so results name the exact source.
# A copy of the tree without .git (e.g. shipped to a GPU machine) can name its commit through
# the environment variable GMB_GIT_SHA.
find_package(Git QUIET)
set(GMB_GIT_SHA "unknown")
if(DEFINED ENV{GMB_GIT_SHA})
  set(GMB_GIT_SHA "$ENV{GMB_GIT_SHA}")
elseif(GIT_FOUND AND EXISTS "${CMAKE_SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}" OUTPUT_VARIABLE _sha
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _sha)
    set(GMB_GIT_SHA "${_sha}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" diff --quiet HEAD --
      WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}" RESULT_VARIABLE _dirty ERROR_QUIET)
    if(NOT _dirty EQUAL 0)
      string(APPEND GMB_GIT_SHA "-dirty")
    endif()
  endif()
  foreach(_f HEAD index)
    if(EXISTS "${CMAKE_SOURCE_DIR}/.git/${_f}")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/.git/${_f}")
    endif()
  endforeach()
endif()
file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/generated/gmb/git_sha.hpp"
  CONTENT "#pragma once\n#define GMB_GIT_SHA \"${GMB_GIT_SHA}\"\n")
