# SPDX-License-Identifier: MIT
# Installs the library, header, pkg-config file and the CMake package gpukern::gpukern.
include(CMakePackageConfigHelpers)

install(TARGETS gpukern EXPORT gpukernTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT gpukernTargets NAMESPACE gpukern::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpukern)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpukernConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gpukernConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpukern)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpukernConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpukernConfig.cmake
  ${PROJECT_BINARY_DIR}/gpukernConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpukern)

configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/gpukern.pc.in ${PROJECT_BINARY_DIR}/gpukern.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/gpukern.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
