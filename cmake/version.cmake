# The git revision baked into every result record. The header and generated/common/git_revision.cpp
# are written once at configure time
# (so that it exists) and again before every build by the scalebench_version target
# (cmake/version_header.cmake), which scalebench_common depends on.
set(_sb_version_args -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${CMAKE_BINARY_DIR}/generated/common/version.hpp
                     -DPROJECT_VERSION=${PROJECT_VERSION})
execute_process(COMMAND ${CMAKE_COMMAND} ${_sb_version_args} -P ${CMAKE_SOURCE_DIR}/cmake/version_header.cmake)
add_custom_target(scalebench_version
                  COMMAND ${CMAKE_COMMAND} ${_sb_version_args} -P ${CMAKE_SOURCE_DIR}/cmake/version_header.cmake
                  BYPRODUCTS ${CMAKE_BINARY_DIR}/generated/common/version.hpp
                             ${CMAKE_BINARY_DIR}/generated/common/git_revision.cpp
                  VERBATIM)
