# `cmake --install build [--prefix P]` and `cpack -G DEB` (docs/install.md):
#   bin/                          scalebench, scalebench-coordinator, scalebench-agent, scalebench-run,
#                                 scalebench-testbed
#   lib/systemd/system/           the units, their ExecStart pointing at bin/ under the prefix
#   share/scalebench/deploy/      Prometheus, Grafana, SLURM and acceptance files
#   share/scalebench/examples/    experiment YAMLs
#   share/doc/scalebench/         README and docs/
include(GNUInstallDirs)

set(SCALEBENCH_PROGRAMS scalebench scalebench-coordinator scalebench-agent scalebench-run)
# Installed programs keep the run path of libraries linked from outside the system's folders
# (CUDA, NCCL and cuDNN from NVIDIA's installers), as the build tree's do.
set_target_properties(${SCALEBENCH_PROGRAMS} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${SCALEBENCH_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The units in deploy/ name /usr/local/bin (where a hand install puts the programs); installed
# ones name the bin/ of the prefix they are installed to, which `cmake --install --prefix` and
# cpack choose at install time: so they are written then.
foreach(unit scalebench-coordinator.service scalebench-agent.service)
  install(CODE "
    file(READ \"${PROJECT_SOURCE_DIR}/deploy/systemd/${unit}\" text)
    string(REPLACE \"/usr/local/bin/\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/\" text \"\${text}\")
    set(unit_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\")
    message(STATUS \"Installing: \${unit_dir}/${unit}\")
    file(MAKE_DIRECTORY \"\${unit_dir}\")
    file(WRITE \"\${unit_dir}/${unit}\" \"\${text}\")")
endforeach()

set(SCALEBENCH_DATA_DIR ${CMAKE_INSTALL_DATADIR}/scalebench)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/prometheus ${PROJECT_SOURCE_DIR}/deploy/grafana
                  ${PROJECT_SOURCE_DIR}/deploy/accept
        DESTINATION ${SCALEBENCH_DATA_DIR}/deploy)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/README.md DESTINATION ${SCALEBENCH_DATA_DIR}/deploy)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/slurm/README.md DESTINATION ${SCALEBENCH_DATA_DIR}/deploy/slurm)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/deploy/slurm/scalebench.sbatch DESTINATION ${SCALEBENCH_DATA_DIR}/deploy/slurm)
# `scalebench testbed` runs the script beside it.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/deploy/testbed/scalebench-testbed DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${SCALEBENCH_DATA_DIR}/examples)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

# cpack -G DEB: one package. Library dependencies come from dpkg-shlibdeps (the CUDA, NCCL and
# cuDNN of NVIDIA's own installers are left to the site); mpirun is a program, named here.
set(CPACK_PACKAGE_NAME scalebench)
set(CPACK_PACKAGE_VENDOR "scalebench")
set(CPACK_PACKAGE_CONTACT "scalebench maintainers <scalebench@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed GPU benchmarking: coordinator, agents, workloads, reports")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # the build's debug information stays in the build
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "prometheus")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "grafana, slurm-client, prometheus-alertmanager")
include(CPack)
