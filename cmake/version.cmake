# The git revision is read at configure time and baked into every result record.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                OUTPUT_VARIABLE SCALEBENCH_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                OUTPUT_VARIABLE _sb_dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT SCALEBENCH_GIT_REVISION)
  set(SCALEBENCH_GIT_REVISION "unknown")
elseif(_sb_dirty)
  set(SCALEBENCH_GIT_REVISION "${SCALEBENCH_GIT_REVISION}-dirty")
endif()
configure_file(${CMAKE_SOURCE_DIR}/common/version.hpp.in ${CMAKE_BINARY_DIR}/generated/common/version.hpp @ONLY)
