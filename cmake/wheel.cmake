# SPDX-License-Identifier: MIT
# Install rules of the Python wheel (SKBUILD): libgpukern.so.1 and the headers inside the package.
# A wheel cannot hold symbolic links, so the library is one file under its soname (the name the
# package loads) and there is no development link; pkg-config and CMake files have no use there.
set_target_properties(gpukern PROPERTIES VERSION ${PROJECT_VERSION_MAJOR})
install(TARGETS gpukern LIBRARY DESTINATION ${GK_LIB_INSTALL_DIR} NAMELINK_SKIP)
# For cffi users (and python/tests/test_cffi.py): gpukern/include/ beside the library.
install(FILES ${PROJECT_SOURCE_DIR}/include/gpukern.h ${PROJECT_BINARY_DIR}/include/gpukern_version.h
  DESTINATION ${GK_LIB_INSTALL_DIR}/include)

# The optional C extension gpukern._fast (python/gpukern/_fast.c): one small op on ndarrays in
# one call instead of five to seven through ctypes. Its source asks for the stable ABI of Python
# 3.11 (Py_LIMITED_API), so one file serves that and every later Python; without Python >= 3.11
# and its development files (Python.h) it is left out, and the package makes the same calls
# through ctypes.
find_package(Python 3.11 COMPONENTS Interpreter Development.Module)
if(Python_Development.Module_FOUND)
  Python_add_library(gk_fast MODULE ${PROJECT_SOURCE_DIR}/python/gpukern/_fast.c)
  set_target_properties(gk_fast PROPERTIES OUTPUT_NAME _fast PREFIX "" SUFFIX ".abi3.so")
  # auditwheel tells an extension's libc by its DT_NEEDED entries, and this one calls nothing of
  # libc's: the link names libc whatever the linker's --as-needed default.
  target_link_libraries(gk_fast PRIVATE "-Wl,--push-state,--no-as-needed" c "-Wl,--pop-state")
  install(TARGETS gk_fast LIBRARY DESTINATION ${GK_LIB_INSTALL_DIR})
else()
  message(STATUS "gpukern._fast: not built (needs Python >= 3.11 and its development files)")
endif()
