# SPDX-License-Identifier: MIT
# Install rules of the Python wheel (SKBUILD): libgpukern.so.1 and the headers inside the package.
# A wheel cannot hold symbolic links, so the library is one file under its soname (the name the
# package loads) and there is no development link; pkg-config and CMake files have no use there.
set_target_properties(gpukern PROPERTIES VERSION ${PROJECT_VERSION_MAJOR})
install(TARGETS gpukern LIBRARY DESTINATION ${GK_LIB_INSTALL_DIR} NAMELINK_SKIP)
# For cffi users (and python/tests/test_cffi.py): gpukern/include/ beside the library.
install(FILES ${PROJECT_SOURCE_DIR}/include/gpukern.h ${PROJECT_BINARY_DIR}/include/gpukern_version.h
  DESTINATION ${GK_LIB_INSTALL_DIR}/include)
