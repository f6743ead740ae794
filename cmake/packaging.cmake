# What `cmake --install` adds for a machine (systemd units, man page, shell completion,
# the Python client) and the Debian packages CPack builds from the whole install:
#   corral      (component runtime) the CLI, its helpers in libexec/corral, and the above
#   corral-dev  (component dev)     headers, static libraries, the CMake package config
# scripts/package builds them; scripts/check-fresh-machine installs them on a clean root.

# Debian 12 ships systemd units in /lib (debhelper's place; merged /usr makes it the same
# directory as /usr/lib). Another prefix keeps them under itself.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_corral_unit_dir_default /lib/systemd/system)
else()
  set(_corral_unit_dir_default ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()
set(CORRAL_SYSTEMD_UNIT_DIR "${_corral_unit_dir_default}" CACHE PATH "where corral.service and corral.socket go")
# Debian's python3 reads modules from /usr/lib/python3/dist-packages; only right with
# CMAKE_INSTALL_PREFIX=/usr (another prefix needs PYTHONPATH or this variable).
set(CORRAL_PYTHON_DIR "${CMAKE_INSTALL_PREFIX}/lib/python3/dist-packages" CACHE PATH
  "where the Python client package (corral/) is installed")

# A destination under the prefix is given relative to it, so CPack can stage it.
function(_corral_install_dir out path)
  string(LENGTH "${CMAKE_INSTALL_PREFIX}/" n)
  string(SUBSTRING "${path}" 0 ${n} head)
  if(head STREQUAL "${CMAKE_INSTALL_PREFIX}/")
    string(SUBSTRING "${path}" ${n} -1 path)
  endif()
  set(${out} "${path}" PARENT_SCOPE)
endfunction()
_corral_install_dir(_corral_unit_dest "${CORRAL_SYSTEMD_UNIT_DIR}")
_corral_install_dir(_corral_python_dest "${CORRAL_PYTHON_DIR}")

# --- systemd units ------------------------------------------------------------------------
set(_corral_systemd ${CMAKE_CURRENT_SOURCE_DIR}/proto/daemon/systemd)
foreach(unit corral.service corral.socket)
  if(EXISTS ${_corral_systemd}/${unit})
    install(FILES ${_corral_systemd}/${unit} DESTINATION ${_corral_unit_dest} COMPONENT runtime)
  else()
    message(WARNING "corral packaging: ${_corral_systemd}/${unit} is missing; the package will lack it")
  endif()
endforeach()

# --- man page, gzipped without a name or time stamp so two builds give the same bytes ------
set(_corral_share ${CMAKE_CURRENT_SOURCE_DIR}/proto/cli/share)
find_program(CORRAL_GZIP gzip)
if(EXISTS ${_corral_share}/corral.1 AND CORRAL_GZIP)
  add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/corral.1.gz
    COMMAND ${CORRAL_GZIP} -9 -n -c ${_corral_share}/corral.1 > ${CMAKE_CURRENT_BINARY_DIR}/corral.1.gz
    DEPENDS ${_corral_share}/corral.1
    COMMENT "compressing the man page")
  add_custom_target(corral_man_page ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/corral.1.gz)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/corral.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
else()
  message(WARNING "corral packaging: no ${_corral_share}/corral.1 (or no gzip); the package will lack the man page")
endif()

# --- shell completion, where Debian's bash-completion and zsh look ------------------------
if(EXISTS ${_corral_share}/corral.bash)
  install(FILES ${_corral_share}/corral.bash RENAME corral
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions COMPONENT runtime)
endif()
if(EXISTS ${_corral_share}/_corral)
  install(FILES ${_corral_share}/_corral DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/zsh/vendor-completions COMPONENT runtime)
endif()

# --- the Python client: the sources and py.typed, never a __pycache__ ---------------------
file(GLOB _corral_python_files CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/proto/python/corral/*.py)
install(FILES ${_corral_python_files} ${CMAKE_CURRENT_SOURCE_DIR}/proto/python/corral/py.typed
  DESTINATION ${_corral_python_dest}/corral COMPONENT runtime)

# --- headers: no empty directories ------------------------------------------------------
# The header rules copy the source tree's shape, so dirs holding no header (proto/python,
# proto/daemon/systemd, ...) arrive empty; removed here, after those rules, deepest first.
install(CODE "
  file(GLOB_RECURSE _corral_dirs LIST_DIRECTORIES true \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}/corral/*\")
  list(SORT _corral_dirs ORDER DESCENDING)
  foreach(_d IN LISTS _corral_dirs)
    file(GLOB _corral_in \"\${_d}/*\")
    if(IS_DIRECTORY \"\${_d}\" AND NOT _corral_in)
      file(REMOVE_RECURSE \"\${_d}\")
    endif()
  endforeach()
" COMPONENT dev)

# --- maintainer scripts -------------------------------------------------------------------
# postinst makes the system group `corral` that corral.socket gives the socket to and
# corral.service admits (--allow-gid corral: serve refuses a group it cannot resolve). It
# enables no service (the admin decides, as Debian policy wants): systemd only learns of the
# new or removed units. The group stays on purge, as Debian does with system groups (files
# may still belong to it). prerm removes the bytecode python3 wrote beside the client, which
# dpkg does not know and would otherwise leave behind.
set(_corral_debian ${CMAKE_CURRENT_BINARY_DIR}/debian)
file(WRITE ${_corral_debian}/postinst "#!/bin/sh
set -e
if [ \"$1\" = configure ] && ! getent group corral >/dev/null; then groupadd --system corral; fi
if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null 2>&1 || true; fi
")
file(WRITE ${_corral_debian}/postrm "#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null 2>&1 || true; fi
")
file(WRITE ${_corral_debian}/prerm "#!/bin/sh
set -e
find '${CORRAL_PYTHON_DIR}/corral' -depth -name __pycache__ -type d -exec rm -rf {} + 2>/dev/null || true
")

# --- CPack: two Debian packages -----------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME corral)
set(CPACK_PACKAGE_VENDOR corral)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CORRAL_PACKAGE_MAINTAINER "corral maintainers <corral@localhost>" CACHE STRING "the Maintainer field of the .debs")
set(CPACK_PACKAGE_CONTACT "${CORRAL_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
# Only these two: anything installed without a component would otherwise become a third.
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME corral)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION admin)
# groupadd in postinst; the libraries' dependencies come from dpkg-shlibdeps.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "passwd")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
  ${_corral_debian}/postinst ${_corral_debian}/prerm ${_corral_debian}/postrm)
# The landlock tier needs only the kernel. python3 runs the bundled client and --lang python;
# the other tiers each need their engine: container (podman, with runc beside crun, which
# refuses a mixed cgroup layout), gvisor (runsc), microvm (qemu).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "podman, runc, runsc, qemu-system-x86")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "run untrusted code inside an isolation boundary
corral runs untrusted code and commands for AI-agent hosts inside an isolation
boundary the operator chooses, and never silently outside it. The default
landlock tier puts each execution in new namespaces, a cgroup with limits, a
Landlock ruleset and a seccomp filter; container, gVisor and microVM tiers use
the engines this package suggests.

This package holds the corral CLI, its daemon (corral serve, with systemd units
that are not enabled), its exec helpers, the man page, bash and zsh completion,
and the Python client module (import corral).")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME corral-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# What find_package(corral) and the exported static libraries' link interfaces need.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libcaf-dev, nlohmann-json3-dev, libtomlplusplus-dev, libspdlog-dev, \
libssl-dev, libuv1-dev, libseccomp-dev, libzstd-dev, libhttp-parser-dev, pkg-config")
set(CPACK_DEBIAN_DEV_DESCRIPTION "corral runtime library: headers, static libraries, CMake config
The corral runtime as C++20 static libraries (corral::corral, corral::daemon,
corral::nodes, corral::http) for agent hosts that embed it, with their headers
and the CMake package configuration for find_package(corral).")

include(CPack)
