# Installation (GNUInstallDirs) and the Debian package (CPack DEB).
#   bin/rackchaos                                    the binary; rack models and policies are embedded in it
#   share/rackchaos/{catalogue,policies}             the same YAML, to read and to copy for a site's own policy
#   share/rackchaos/{scenarios,sites}                example plans and site inventories
#   share/bash-completion/completions/rackchaos      bash completion   } generated from `rackchaos --help`
#   share/zsh/vendor-completions/_rackchaos          zsh completion    } at build time (cmake/cli_docs.sh),
#   share/man/man1/rackchaos.1                       man page          } so they cannot drift from the CLI
#   share/doc/rackchaos/                             README.md and docs/
include(GNUInstallDirs)
# `cmake --install` and cpack install what is built and do not build everything first (the tests take
# minutes on 2 cores): build, then install. Installing needs only the rackchaos target built.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# Written by runner/CMakeLists.txt every time the binary is linked (cmake/cli_docs.sh).
set(RACKCHAOS_CLI_DOCS_DIR ${PROJECT_BINARY_DIR}/cli-docs)

install(TARGETS rackchaos RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cluster/catalogue/ DESTINATION ${CMAKE_INSTALL_DATADIR}/rackchaos/catalogue
        FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/healer/policies/ DESTINATION ${CMAKE_INSTALL_DATADIR}/rackchaos/policies
        FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/rackchaos/scenarios
        FILES_MATCHING PATTERN "*.yaml")
install(FILES ${PROJECT_SOURCE_DIR}/sites/gb200-example.yaml ${PROJECT_SOURCE_DIR}/sites/k8s-example.yaml DESTINATION ${CMAKE_INSTALL_DATADIR}/rackchaos/sites)
install(FILES ${RACKCHAOS_CLI_DOCS_DIR}/rackchaos.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME rackchaos)
install(FILES ${RACKCHAOS_CLI_DOCS_DIR}/_rackchaos DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${RACKCHAOS_CLI_DOCS_DIR}/rackchaos.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# `cpack -G DEB` (or `cmake --build build --target package`) builds rackchaos_VERSION_ARCH.deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rackchaos)
set(CPACK_PACKAGE_VENDOR "rackchaos")
set(CPACK_PACKAGE_CONTACT "rackchaos maintainers <rackchaos@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "fault injection and self-healing tests for rack-scale GPU clusters")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # library dependencies from dpkg-shlibdeps (package dpkg-dev)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "sqlite3, openssh-client")
set(CPACK_STRIP_FILES ON)
include(CPack)
