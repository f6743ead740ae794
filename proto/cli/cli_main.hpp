// Every CLI command, dispatched on argv[1]: corral-full's main (proto/cli/full/main.cpp)
// and the entry of corral-local.so (proto/cli/lean/local_entry.cpp), which the lean
// program opens for everything it does not serve itself (proto/cli/front/).
#pragma once

namespace corral::cli {

int cli_main(int argc, char** argv);

} // namespace corral::cli
