# gmb_add_flavor(<flavor> <dlcm>): the benchmark sources built with `-Xptxas -dlcm=<dlcm>`
# (or nvcc's default when <dlcm> is empty). Produces gmb_bench_<flavor> (an object library the
# tests link too) and the executable gmembench[-<flavor>]. Benchmark names are identical in
# every flavor; GMB_FLAVOR puts the flavor into the JSON context.
function(gmb_add_flavor flavor dlcm)
  set(objs gmb_bench_${flavor})
  add_library(${objs} OBJECT ${GMB_BENCHMARK_SOURCES})
  target_include_directories(${objs} PUBLIC "${PROJECT_SOURCE_DIR}")
  target_link_libraries(${objs} PUBLIC gmb_core benchmark::benchmark gmb_cub_sum gmb_bench_once)
  # GMB_DLCM: main.cu hands it to the pattern family, whose kernels NVRTC compiles at run time.
  target_compile_definitions(${objs} PUBLIC GMB_FLAVOR="${flavor}" GMB_DLCM="${dlcm}"
    $<$<BOOL:${GMB_BENCHMARK_MIN_TIME_SUFFIX}>:GMB_BENCHMARK_MIN_TIME_SUFFIX>)
  if(dlcm)
    # PUBLIC: main.cu and everything else linked into the flavor's executable get it too.
    target_compile_options(${objs} PUBLIC $<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-dlcm=${dlcm}>)
  endif()

  if(flavor STREQUAL "default")
    set(exe gmembench)
  else()
    set(exe gmembench-${flavor})
  endif()
  add_executable(${exe} benchmarks/main.cu)
  add_dependencies(${exe} gmb_git_sha)
  target_link_libraries(${exe} PRIVATE ${objs} nlohmann_json::nlohmann_json)
  set_target_properties(${exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}")
  if(GMB_CUOBJDUMP)  # the kernels' SASS beside the binary (cmake/WriteSass.cmake says why)
    add_custom_command(TARGET ${exe} POST_BUILD
      COMMAND "${CMAKE_COMMAND}" "-DCUOBJDUMP=${GMB_CUOBJDUMP}" "-DBINARY=$<TARGET_FILE:${exe}>"
              -P "${PROJECT_SOURCE_DIR}/cmake/WriteSass.cmake"
      VERBATIM)
  else()  # no listing from an earlier configuration beside a binary it does not describe
    add_custom_command(TARGET ${exe} POST_BUILD
      COMMAND "${CMAKE_COMMAND}" -E rm -f "$<TARGET_FILE:${exe}>.sass" VERBATIM)
  endif()
endfunction()
