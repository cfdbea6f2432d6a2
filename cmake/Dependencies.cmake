# Google Benchmark, nlohmann/json and GoogleTest: the system packages when present
# (libbenchmark-dev, nlohmann-json3-dev, libgtest-dev), otherwise upstream release tags.
include(FetchContent)

find_package(benchmark QUIET)
set(GMB_BENCHMARK_VERSION "${benchmark_VERSION}")
if(NOT benchmark_FOUND)
  set(GMB_BENCHMARK_VERSION 1.8.3)
  message(STATUS "Google Benchmark not found: fetching v1.8.3")
  set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_WERROR OFF CACHE BOOL "" FORCE)
  FetchContent_Declare(benchmark
    URL https://github.com/google/benchmark/archive/refs/tags/v1.8.3.tar.gz)
  FetchContent_MakeAvailable(benchmark)
endif()
# --benchmark_min_time takes "0.011s" from 1.8 on (a bare number only warns), only "0.011" before.
if(GMB_BENCHMARK_VERSION VERSION_GREATER_EQUAL 1.8)
  set(GMB_BENCHMARK_MIN_TIME_SUFFIX ON)
endif()
message(STATUS "Google Benchmark ${GMB_BENCHMARK_VERSION}")

find_package(nlohmann_json 3.10 QUIET)
if(NOT nlohmann_json_FOUND)
  message(STATUS "nlohmann/json not found: fetching v3.11.3")
  FetchContent_Declare(json
    URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz)
  FetchContent_MakeAvailable(json)
endif()

if(GMB_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    message(STATUS "GoogleTest not found: fetching v1.14.0")
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    FetchContent_Declare(googletest
      URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz)
    FetchContent_MakeAvailable(googletest)
    if(NOT TARGET GTest::gtest_main)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
  endif()
endif()
