# SPDX-License-Identifier: MIT
# Installs the library, header, pkg-config file and the CMake package gpukern::gpukern. Each file
# belongs to a component, one per Debian package (cmake/package.cmake): runtime (libgpukern1: the
# library and its CUDA module) and development (libgpukern-dev: everything a build needs).
include(CMakePackageConfigHelpers)

install(TARGETS gpukern EXPORT gpukernTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)

install(EXPORT gpukernTargets NAMESPACE gpukern::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpukern COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpukernConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gpukernConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpukern)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpukernConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpukernConfig.cmake
  ${PROJECT_BINARY_DIR}/gpukernConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpukern COMPONENT development)

# The .pc file finds its prefix from its own location, so `cmake --install --prefix` anywhere
# gives a working file: prefix = pkgconfig dir, up past pkgconfig/ and each part of libdir.
# Packages for /usr turn that off (GK_PC_RELOCATABLE=OFF): with libdir spelled
# /usr/lib/<triplet>, pkg-config knows it for a system directory and prints no -L for it.
option(GK_PC_RELOCATABLE "gpukern.pc finds its prefix from its own location" ON)
if(NOT GK_PC_RELOCATABLE OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(GK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(GK_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
else()
  set(GK_PC_PREFIX "\${pcfiledir}/..")
  string(REPLACE "/" ";" gk_libdir_parts "${CMAKE_INSTALL_LIBDIR}")
  foreach(part IN LISTS gk_libdir_parts)
    string(APPEND GK_PC_PREFIX "/..")
  endforeach()
  set(GK_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(NOT GK_PC_RELOCATABLE OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(GK_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  set(GK_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
if(GK_HAVE_SLEEF)
  set(GK_PC_REQUIRES_SLEEF " sleef")
endif()
configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/gpukern.pc.in ${PROJECT_BINARY_DIR}/gpukern.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/gpukern.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT development)
