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
# The header holds what changes with the project's version only; the revision is in a source file
# of its own, so that a commit recompiles that one file, not every unity batch that reads the header.
configure_file(${SOURCE_DIR}/common/version.hpp.in ${OUTPUT} @ONLY)
get_filename_component(_sb_out_dir ${OUTPUT} DIRECTORY)
configure_file(${SOURCE_DIR}/common/git_revision.cpp.in ${_sb_out_dir}/git_revision.cpp @ONLY)
