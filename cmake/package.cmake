# SPDX-License-Identifier: MIT
# Debian packages from CPack (`cpack -G DEB` in a build configured with CMAKE_INSTALL_PREFIX=/usr):
# libgpukern1, libgpukern-dev and, with MPI, libgpukern-mpi1 and libgpukern-mpi-dev, one per
# install component. dpkg-shlibdeps finds the run-time dependencies (Debian's OpenBLAS, SLEEF,
# libgomp, Open MPI); each library package carries a shlibs file and a symbols file made from
# its version script, so programs built against it depend on the lowest version they can use.

# Debian's symbols file of a library, from its version script: every symbol of a node GPUKERN_x.y
# (and the node itself) with x.y.0, the release that brought it.
function(gk_debian_symbols map soname package dev_package out)
  file(READ ${map} text)
  string(REGEX REPLACE "/\\*[^*]*\\*/" "" text "${text}")
  string(REPLACE ";" " " text "${text}")
  string(REGEX MATCHALL "[A-Z_]+_[0-9]+\\.[0-9]+ *{[^}]*}" nodes "${text}")
  set(entries)
  foreach(node IN LISTS nodes)
    string(REGEX MATCH "^([A-Z_]+_([0-9]+\\.[0-9]+))" _ "${node}")
    set(name ${CMAKE_MATCH_1})
    set(version ${CMAKE_MATCH_2}.0)
    string(REGEX REPLACE "local:.*" "" node "${node}")
    string(REGEX REPLACE "^[^{]*{[ \t\n]*global:" "" node "${node}")
    string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*" symbols "${node}")
    list(APPEND entries "${name}@${name} ${version}")
    foreach(symbol IN LISTS symbols)
      list(APPEND entries "${symbol}@${name} ${version}")
    endforeach()
  endforeach()
  # In dpkg-gensymbols' order, so that the file reads as the one it would write.
  list(SORT entries)
  list(JOIN entries "\n " entries)
  file(WRITE ${out} "${soname} ${package} #MINVER#\n* Build-Depends-Package: ${dev_package}\n"
    " ${entries}\n")
endfunction()

set(gk_deb_dir ${PROJECT_BINARY_DIR}/debian)
gk_debian_symbols(${PROJECT_SOURCE_DIR}/src/gpukern.map libgpukern.so.${PROJECT_VERSION_MAJOR}
  libgpukern${PROJECT_VERSION_MAJOR} libgpukern-dev ${gk_deb_dir}/runtime/symbols)
set(CPACK_COMPONENTS_ALL runtime development)
if(GK_WITH_MPI)
  gk_debian_symbols(${PROJECT_SOURCE_DIR}/mpi/gpukern_mpi.map
    libgpukern_mpi.so.${PROJECT_VERSION_MAJOR} libgpukern-mpi${PROJECT_VERSION_MAJOR}
    libgpukern-mpi-dev ${gk_deb_dir}/mpi_runtime/symbols)
  list(APPEND CPACK_COMPONENTS_ALL mpi_runtime mpi_development)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpukern)
set(CPACK_PACKAGE_VENDOR "libgpukern")
set(CPACK_PACKAGE_CONTACT "The libgpukern authors <libgpukern@users.noreply.github.com>")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_DEB_COMPONENT_INSTALL ON)
# Every package's synopsis is the project's description; each says below it what it holds.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The packages' own libraries are not installed where dpkg-shlibdeps looks while it runs.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${GK_OUTPUT_LIBDIR})

set(gk_deb_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
set(gk_runtime libgpukern${PROJECT_VERSION_MAJOR})

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${gk_runtime})
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "The shared library libgpukern runs element-wise operations,
reductions, GEMM, Gaussian kernels and random numbers on an NVIDIA GPU (a CUDA module
loaded at run time, which needs the NVIDIA driver and cuBLAS) or on the CPU (OpenBLAS
and OpenMP).")
# cuBLAS is not in Debian: the CUDA module finds the toolkit's at run time or is not used.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "nvidia-driver")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${gk_deb_dir}/runtime/symbols)

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libgpukern-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_DESCRIPTION "The header gpukern.h, the libgpukern.so link, gpukern.pc
for pkg-config and the CMake package (find_package(gpukern), target gpukern::gpukern).")
# gpukern.pc names openblas and sleef in Requires.private, which pkg-config reads in any case.
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS
  "${gk_runtime} (= ${gk_deb_version}), libopenblas-dev, libsleef-dev, pkg-config")

set(CPACK_DEBIAN_MPI_RUNTIME_PACKAGE_NAME libgpukern-mpi${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_MPI_RUNTIME_DESCRIPTION "The shared library libgpukern_mpi computes a Gaussian kernel
matrix-vector product over the ranks of an MPI communicator (Open MPI), each rank on its
own GPU or CPU through libgpukern.")
set(CPACK_DEBIAN_MPI_RUNTIME_PACKAGE_DEPENDS "${gk_runtime} (>= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_MPI_RUNTIME_PACKAGE_CONTROL_EXTRA ${gk_deb_dir}/mpi_runtime/symbols)

set(CPACK_DEBIAN_MPI_DEVELOPMENT_PACKAGE_NAME libgpukern-mpi-dev)
set(CPACK_DEBIAN_MPI_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_MPI_DEVELOPMENT_DESCRIPTION "The header gpukern_mpi.h, the libgpukern_mpi.so link,
gpukern-mpi.pc and the CMake component (find_package(gpukern COMPONENTS mpi), target
gpukern::mpi).")
set(CPACK_DEBIAN_MPI_DEVELOPMENT_PACKAGE_DEPENDS
  "libgpukern-mpi${PROJECT_VERSION_MAJOR} (= ${gk_deb_version}),"
  "libgpukern-dev (= ${gk_deb_version}), libopenmpi-dev")
list(JOIN CPACK_DEBIAN_MPI_DEVELOPMENT_PACKAGE_DEPENDS " " CPACK_DEBIAN_MPI_DEVELOPMENT_PACKAGE_DEPENDS)

include(CPack)
