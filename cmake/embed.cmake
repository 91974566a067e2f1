# Writes OUT, a C++ file defining `const char* const SYMBOL` holding the bytes of IN.
# A raw string literal would break on its own delimiter, so the text is emitted as hex bytes. The array is
# named after SYMBOL so that several embedded files can share a unity build (RACKCHAOS_UNITY).
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
file(WRITE "${OUT}" "// Generated from ${IN}; do not edit.\nnamespace { const char ${SYMBOL}Data[] = {${bytes} 0}; }\nextern const char* const ${SYMBOL};\nconst char* const ${SYMBOL} = ${SYMBOL}Data;\n")
