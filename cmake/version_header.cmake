# Writes the generated version header (script mode: cmake -DSOURCE_DIR=... -DOUTPUT=...
# -DPROJECT_VERSION=... -P version_header.cmake). Run at every build, so that the git revision
# in result records is the one that was built, not the one of the last configure; the header is
# rewritten only when its text changes, so an unchanged revision recompiles nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE SCALEBENCH_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git --no-optional-locks status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE _sb_dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT SCALEBENCH_GIT_REVISION)
  set(SCALEBENCH_GIT_REVISION "unknown")
elseif(_sb_dirty)
  set(SCALEBENCH_GIT_REVISION "${SCALEBENCH_GIT_REVISION}-dirty")
endif()
configure_file(${SOURCE_DIR}/common/version.hpp.in ${OUTPUT} @ONLY)
