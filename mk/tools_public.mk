# The tools, benchmarks and examples use only the public API (tests/tools_public_api.sh: no private
# names, and each builds with the implementation linked from a translation unit of its own).
TEST_SCRIPTS += tests/tools_public_api.sh
