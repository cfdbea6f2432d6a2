# Target gmb_git_sha: before every build, writes generated/gmb/git_sha.hpp with the source's
# commit (plus "-dirty" for uncommitted changes), touching it only when the value changes, so
# results always name the exact source and an unchanged tree rebuilds nothing.
set(GMB_GIT_SHA_HEADER "${CMAKE_BINARY_DIR}/generated/gmb/git_sha.hpp")
add_custom_target(gmb_git_sha
  COMMAND "${CMAKE_COMMAND}" -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${GMB_GIT_SHA_HEADER}
          -P "${CMAKE_CURRENT_LIST_DIR}/WriteGitSha.cmake"
  BYPRODUCTS "${GMB_GIT_SHA_HEADER}"
  VERBATIM)
