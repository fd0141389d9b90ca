# Installing and packaging (README "Install"): `cmake --install BUILD --prefix P` lays out
#   P/bin/lagom and its lagom-<command> links;
#   P/lib/ the NCCL tuner and profiler plugins and, with CUDA, the GPU modules (lagom opens them from
#     <dir of lagom>/../lib, the build folder's own layout, so the prefix is relocatable);
#   the Python package `lagom` in P's Python library folder: the site-packages of a virtual environment
#     made at P (P/bin/python3 exists), else lib/python3/dist-packages (Debian's, for /usr);
#   P/share/doc/lagom: README, ARCHITECTURE.md and docs/.
# `cpack -G DEB` in the build folder makes lagom_<version>_<arch>.deb with the same layout under /usr.
install(TARGETS lagom RUNTIME DESTINATION bin)
foreach(cmd IN LISTS LAGOM_COMMANDS)
  install(CODE "file(CREATE_LINK lagom \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/lagom-${cmd}\" SYMBOLIC)")
endforeach()
install(TARGETS nccl_tuner_lagom nccl_profiler_lagom LIBRARY DESTINATION lib)
if(LAGOM_ENABLE_CUDA)
  install(TARGETS lagom_cuda_kernels lagom-nccl LIBRARY DESTINATION lib)
endif()

# The Python package: where the prefix's own Python looks when the prefix is a virtual environment (asked
# of that Python at install time), else Debian's folder for modules of /usr.
install(CODE "set(_lagom_package \"${PROJECT_SOURCE_DIR}/shim/python/lagom\")")
install(CODE [[
  # file(INSTALL) adds DESTDIR (a package's staging folder) to the destination itself; the probe does not.
  set(_lagom_root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
  set(_lagom_python_dir "${CMAKE_INSTALL_PREFIX}/lib/python3/dist-packages")
  if(EXISTS "${_lagom_root}/bin/python3" AND "$ENV{DESTDIR}" STREQUAL "")
    execute_process(
      COMMAND "${_lagom_root}/bin/python3" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"
      OUTPUT_VARIABLE _lagom_purelib OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _lagom_rc)
    if(_lagom_rc EQUAL 0 AND _lagom_purelib)
      set(_lagom_python_dir "${_lagom_purelib}")
    endif()
  endif()
  file(INSTALL "${_lagom_package}" DESTINATION "${_lagom_python_dir}" PATTERN "__pycache__" EXCLUDE)
]])
install(FILES README.md ARCHITECTURE.md DESTINATION share/doc/lagom)
install(DIRECTORY docs/ DESTINATION share/doc/lagom/docs)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME lagom)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Profile, model, simulate and tune communication of distributed LLM training")
set(CPACK_PACKAGE_CONTACT "Lagom <lagom@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The Debian packages lagom links (README "Set-up"); CUDA, NCCL and cuBLAS stay outside: the GPU modules
# are opened only when a command needs a GPU.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libfmt9, libsqlite3-0, libopenmpi3, libcsv3, python3")
set(CPACK_STRIP_FILES ON)
include(CPack)
