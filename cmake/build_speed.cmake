# Build time. Nearly every translation unit includes nlohmann/json (through common/json.hpp) and
# instantiates, optimises and describes for the debugger the same templates; the HTTP code does
# the same with Boost.Beast and Asio. Three levers, each with its option so that a build problem
# can be bisected:
# - SCALEBENCH_UNITY: the host sources of each library and program compiled in unity batches
#   (CMake's UNITY_BUILD): the shared headers are parsed, and their templates instantiated and
#   optimised, once per batch instead of once per file. Off for incremental work on one file.
# - SCALEBENCH_PCH: the heavy third-party headers precompiled once per target. Off by default: with
#   unity batches it measured slower on 2 cores (a fresh quick-start build 332 s against 272 s).
# - SCALEBENCH_DEBUG_INFO: RelWithDebInfo keeps line tables only (-g1): backtraces and profiles
#   still name file:line, the objects are a quarter of the size and compile a third faster;
#   "full" restores -g (local variables and types, for a debugger).
option(SCALEBENCH_UNITY "Compile the host sources of each target in unity batches" ON)
option(SCALEBENCH_PCH "Precompile the heavy third-party headers (nlohmann/json, Boost.Beast, GoogleTest)" OFF)
set(SCALEBENCH_DEBUG_INFO lines CACHE STRING "Debug information of RelWithDebInfo builds: lines (-g1) or full (-g)")
set_property(CACHE SCALEBENCH_DEBUG_INFO PROPERTY STRINGS lines full)
if(SCALEBENCH_DEBUG_INFO STREQUAL "lines")
  # After the configuration's -g on the command line, so it wins (GCC and Clang: the last -gN).
  add_compile_options("$<$<AND:$<CONFIG:RelWithDebInfo>,$<COMPILE_LANGUAGE:C,CXX>>:-g1>")
endif()

# scalebench_speed_up(TARGET [HEADERS...]): unity batches and precompiled nlohmann/json (and the
# HEADERS given) for TARGET's C++ sources. CUDA sources are left as they are.
function(scalebench_speed_up target)
  if(NOT TARGET ${target})
    return()
  endif()
  if(SCALEBENCH_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${SCALEBENCH_UNITY_BATCH})
  endif()
  if(SCALEBENCH_PCH)
    # <header$<ANGLE-R>: a > would end the generator expression.
    foreach(header nlohmann/json.hpp ${ARGN})
      target_precompile_headers(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:<${header}$<ANGLE-R>>")
    endforeach()
  endif()
endfunction()
set(SCALEBENCH_UNITY_BATCH 16 CACHE STRING "Sources per unity batch (0: one batch per target)")
