# cmake -DCUOBJDUMP=<cuobjdump> -DBINARY=<executable> -P WriteSass.cmake
# Writes <executable>.sass, the kernels' SASS listing, from which the binary counts each
# kernel's instructions (include/gmb/sass_paths.hpp, counter model_warp_instructions).
# A failure leaves no listing and no counter, never a failed build.
execute_process(COMMAND "${CUOBJDUMP}" -sass "${BINARY}" OUTPUT_FILE "${BINARY}.sass.tmp"
                RESULT_VARIABLE rc ERROR_QUIET)
if(rc EQUAL 0)
  file(RENAME "${BINARY}.sass.tmp" "${BINARY}.sass")
else()
  file(REMOVE "${BINARY}.sass.tmp" "${BINARY}.sass")
  message(WARNING "cuobjdump failed on ${BINARY}: its runs have no model_warp_instructions")
endif()
