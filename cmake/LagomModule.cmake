# Shared compile settings for every Lagom target.
add_library(lagom_warnings INTERFACE)
target_compile_options(lagom_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
                             -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough>)
if(LAGOM_WERROR)
  target_compile_options(lagom_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
                                                  $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
endif()
if(LAGOM_SANITIZE)
  target_compile_options(lagom_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(lagom_warnings INTERFACE -fsanitize=address,undefined)
endif()
if(LAGOM_FUZZ)
  # libFuzzer (clang's -fsanitize=fuzzer; Debian's libclang-rt-<version>-dev ships its runtime) steers by
  # the coverage of the library code too, so every Lagom target is instrumented; the fuzz targets alone link
  # the fuzzer's main (tests/fuzz/CMakeLists.txt). Without the sanitizers a memory error would go unseen.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LAGOM_FUZZ=ON needs clang (CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(NOT LAGOM_SANITIZE)
    message(FATAL_ERROR "LAGOM_FUZZ=ON needs LAGOM_SANITIZE=ON (a fuzz run checks memory and undefined behaviour)")
  endif()
  target_compile_options(lagom_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()

# The module arrows: cmake/arrows.txt, one line `<module>: <modules it may depend on>` per module, the one
# place they are declared. CMake links by them; tests/repo/check_includes.py checks every #include
# against them (the include path is the repository root for every module, so the linker alone would miss
# a header-only use).
set(LAGOM_ARROWS_FILE ${PROJECT_SOURCE_DIR}/cmake/arrows.txt)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${LAGOM_ARROWS_FILE})
file(STRINGS ${LAGOM_ARROWS_FILE} _lagom_arrow_lines REGEX "^[a-z_]+:")
foreach(_line IN LISTS _lagom_arrow_lines)
  string(REGEX REPLACE "#.*" "" _line "${_line}")
  string(REGEX MATCH "^([a-z_]+):(.*)$" _match "${_line}")
  set(_module ${CMAKE_MATCH_1})
  string(REGEX MATCHALL "[a-z_]+" _deps "${CMAKE_MATCH_2}")
  set(_targets "")
  foreach(_dep IN LISTS _deps)
    list(APPEND _targets lagom::${_dep})
  endforeach()
  set_property(GLOBAL PROPERTY LAGOM_ARROWS_${_module} "${_targets}")
  set_property(GLOBAL APPEND PROPERTY LAGOM_MODULES ${_module})
endforeach()

# lagom_module_depends(NAME OUT_VAR): the lagom::<dep> targets module NAME may link (cmake/arrows.txt).
function(lagom_module_depends name out_var)
  get_property(_modules GLOBAL PROPERTY LAGOM_MODULES)
  if(NOT name IN_LIST _modules)
    message(FATAL_ERROR "module ${name} has no line in cmake/arrows.txt (add '${name}: <modules>')")
  endif()
  get_property(_targets GLOBAL PROPERTY LAGOM_ARROWS_${name})
  set(${out_var} ${_targets} PARENT_SCOPE)
endfunction()

# lagom_module(NAME SOURCES ... [PUBLIC_LIBS ...] [PRIVATE_LIBS ...])
# Creates static library lagom_<NAME> with alias lagom::<NAME>, linked PUBLIC to the modules of its line in
# cmake/arrows.txt. Headers are included as "<module>/<file>.h" from the repository root.
function(lagom_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPENDS;PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
  if(M_DEPENDS)
    message(FATAL_ERROR "lagom_module(${name}): module arrows live in cmake/arrows.txt, not in DEPENDS")
  endif()
  lagom_module_depends(${name} _depends)
  add_library(lagom_${name} STATIC ${M_SOURCES})
  add_library(lagom::${name} ALIAS lagom_${name})
  target_include_directories(lagom_${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(lagom_${name} PUBLIC ${_depends} ${M_PUBLIC_LIBS} PRIVATE lagom_warnings ${M_PRIVATE_LIBS})
endfunction()
