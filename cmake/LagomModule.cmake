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

# lagom_module(NAME SOURCES ... DEPENDS lagom::x ... [PUBLIC_LIBS ...] [PRIVATE_LIBS ...])
# Creates static library lagom_<NAME> with alias lagom::<NAME>. Headers are included as
# "<module>/<file>.h" from the repository root, so only declared dependencies resolve at link time.
function(lagom_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPENDS;PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
  add_library(lagom_${name} STATIC ${M_SOURCES})
  add_library(lagom::${name} ALIAS lagom_${name})
  target_include_directories(lagom_${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(lagom_${name} PUBLIC ${M_DEPENDS} ${M_PUBLIC_LIBS} PRIVATE lagom_warnings ${M_PRIVATE_LIBS})
endfunction()
